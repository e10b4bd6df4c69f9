package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// envFail makes a worker process of this test binary fail on purpose.
const envFail = "SCALEPLAN_DIST_TEST_FAIL"

// TestMain lets this test binary serve as the worker program: Run starts
// it with EnvCoordinator set, and it then runs RunWorker instead of the
// tests.
func TestMain(m *testing.M) {
	if IsWorker() {
		if os.Getenv(envFail) != "" {
			fmt.Fprintln(os.Stderr, "worker failing on purpose")
			os.Exit(3)
		}
		if err := RunWorker(context.Background(), os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testSpawn starts this test binary as the workers.
func testSpawn(t *testing.T, env ...string) *Spawn {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("cannot find the test binary:", err)
	}
	return &Spawn{Path: exe, Args: []string{"-test.run=^$"}, Env: env}
}

// Worker processes over TCP give the same bits as goroutines in one
// process over channels.
func TestProcessesMatchInproc(t *testing.T) {
	c := tiny()
	c.Workers, c.Overlap = 3, true
	in, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	c.Transport = "tcp"
	var stderr bytes.Buffer
	c.Spawn = testSpawn(t)
	c.Spawn.Stderr = &stderr
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("%v\nworkers' output:\n%s", err, stderr.String())
	}
	if res.ParamsHash != in.ParamsHash {
		t.Errorf("processes: parameters hash to %016x, in-process to %016x", res.ParamsHash, in.ParamsHash)
	}
}

// A worker process that fails makes Run fail promptly with its output.
func TestProcessFailure(t *testing.T) {
	c := tiny()
	c.Workers, c.Transport, c.Timeout = 2, "tcp", time.Minute
	c.Spawn = testSpawn(t, envFail+"=1")
	t0 := time.Now()
	_, err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "worker 1") || !strings.Contains(err.Error(), "worker failing on purpose") {
		t.Errorf("error %v, want one naming worker 1 and quoting its output", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("took %v to notice (timeout 1 min)", d)
	}
}

// A program that is not a worker makes Run fail at the timeout rather
// than hang.
func TestProcessNeverJoins(t *testing.T) {
	c := tiny()
	c.Workers, c.Transport, c.Timeout = 2, "tcp", 300*time.Millisecond
	c.Spawn = &Spawn{Path: "/bin/sleep", Args: []string{"30"}}
	if _, err := os.Stat(c.Spawn.Path); err != nil {
		t.Skip("no /bin/sleep")
	}
	t0 := time.Now()
	_, err := Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "waiting for 1 of 1 workers to join") {
		t.Errorf("error %v, want a join timeout", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("returned after %v (timeout 300ms; the process must be killed, not waited for)", d)
	}
}

// RunWorker without its environment is an error, not a hang.
func TestRunWorkerNeedsEnvironment(t *testing.T) {
	t.Setenv(EnvCoordinator, "")
	if err := RunWorker(context.Background(), nil); err == nil || !strings.Contains(err.Error(), EnvCoordinator) {
		t.Errorf("error %v, want one naming %s", err, EnvCoordinator)
	}
}

// A member with the run's token and a rank out of range is an error.
func TestCoordinatorRejectsStranger(t *testing.T) {
	tok := testToken(t)
	co, err := newCoordinator(2, "127.0.0.1:1", tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	errc := make(chan error, 1)
	go func() { errc <- co.gather(context.Background(), 5*time.Second) }()
	j, err := join(context.Background(), co.Addr(), 5, tok, time.Second) // rank out of range
	if err == nil {
		j.Close()
	}
	if err := <-errc; !errors.Is(err, errProtocol) {
		t.Errorf("gather: %v, want a protocol error", err)
	}
}

// A worker whose coordinator goes away (worker 0's process died) stops at
// once instead of waiting for its timeout.
func TestMemberEndsWhenCoordinatorCloses(t *testing.T) {
	tok := testToken(t)
	co, err := newCoordinator(2, "127.0.0.1:1", tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- runMember(context.Background(), co.Addr(), 1, tok, time.Minute, nil) }()
	if err := co.gather(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c := tiny()
	c.Workers, c.Transport, c.Steps, c.Timeout = 2, "tcp", 1<<20, time.Minute
	if err := co.start(c.WithDefaults(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	co.Close() // worker 0 disappears before connecting to the ring
	select {
	case err := <-done:
		if err == nil {
			t.Error("worker ended without an error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("worker still running 20 s after its coordinator closed (timeout 1 min)")
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("worker took %v to stop", d)
	}
}
