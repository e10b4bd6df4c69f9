package dist

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testToken draws a token or fails the test.
func testToken(t *testing.T) token {
	t.Helper()
	tok, err := newToken()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// strayKinds are the connections a stranger makes to a rendezvous
// listener: what it sends, by role, before it waits for an answer.
var strayKinds = []struct {
	name  string
	hello func(role string) []byte // nil: close at once
}{
	{"garbage", func(string) []byte { return []byte("GET / HTTP/1.0\r\n\r\n") }},
	{"wrong token", func(role string) []byte {
		wrong := strings.Repeat("ab", tokenLen)
		if role == "coordinator" {
			return fmt.Appendf(nil, "{\"protocol\":%q,\"token\":%q,\"rank\":1,\"ring\":\"127.0.0.1:1\"}\n", protocol, wrong)
		}
		b := make([]byte, ringHelloLen)
		copy(b, ringMagic[:])
		binary.LittleEndian.PutUint32(b[8:], 0)
		binary.LittleEndian.PutUint32(b[12:], 2)
		hex.Decode(b[16:], []byte(wrong))
		return b
	}},
	{"half greeting", func(role string) []byte {
		if role == "coordinator" {
			return fmt.Appendf(nil, "{\"protocol\":%q,\"tok", protocol)
		}
		return ringMagic[:]
	}},
	{"nothing", func(string) []byte { return []byte{} }},
	{"immediate close", nil},
}

// strays connects one stray of each kind to every rendezvous listener
// that opens while it is installed, and counts the bytes they receive.
type strays struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	received map[string]int // by role and kind
	errs     []error
}

func (s *strays) install(t *testing.T) {
	s.received = map[string]int{}
	listened = func(role, addr string) {
		// Connect and send before the listener is used, so that the
		// strays are queued ahead of the workers.
		for _, k := range strayKinds {
			c, err := strayConnect(addr, k.hello, role)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				n, err := strayRead(c, err)
				s.mu.Lock()
				s.received[role+" "+k.name] += n
				if err != nil {
					s.errs = append(s.errs, fmt.Errorf("%s %s stray: %w", role, k.name, err))
				}
				s.mu.Unlock()
			}()
		}
	}
	t.Cleanup(func() { listened = nil })
}

// strayConnect connects to addr and sends hello(role); with hello nil it
// closes at once and returns a nil connection.
func strayConnect(addr string, hello func(string) []byte, role string) (net.Conn, error) {
	c, err := net.Dial("tcp4", addr)
	if err != nil || hello == nil {
		if c != nil {
			c.Close()
		}
		return nil, err
	}
	if _, err := c.Write(hello(role)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// strayRead returns how many bytes c receives before the other end
// closes it (a reset counts as a close).
func strayRead(c net.Conn, err error) (int, error) {
	if c == nil || err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		return int(n), err
	}
	return int(n), nil
}

// Stray connections to every rendezvous listener during start-up (the
// coordinator and the ring listeners; garbage, a wrong token, half a
// greeting, nothing, an immediate close) neither abort a TCP run nor
// change its result, and none of them receives a byte (the job is only
// sent to workers that presented the token).
func TestStraysDuringRun(t *testing.T) {
	for _, v := range []struct {
		name    string
		workers int
		procs   bool
	}{{"goroutines", 3, false}, {"processes", 2, true}} {
		t.Run(v.name, func(t *testing.T) {
			c := tiny()
			c.Workers, c.Transport, c.Timeout = v.workers, "tcp", time.Minute
			var stderr syncBuffer
			if v.procs {
				c.Spawn = testSpawn(t)
				c.Spawn.Stderr = &stderr
			}
			want, err := Run(context.Background(), c)
			if err != nil {
				t.Fatalf("run without strays: %v\nworkers' output:\n%s", err, stderr.String())
			}
			var s strays
			s.install(t)
			var log syncBuffer
			c.Log = &log
			res, err := Run(context.Background(), c)
			listened = nil
			if err != nil {
				t.Fatalf("run with strays: %v\nworkers' output:\n%s", err, stderr.String())
			}
			if res.ParamsHash != want.ParamsHash {
				t.Errorf("with strays: parameters hash to %016x, without to %016x", res.ParamsHash, want.ParamsHash)
			}
			s.wg.Wait()
			t.Logf("log:\n%s", log.String())
			checkStrays(t, &s, log.String(), v.workers, v.procs)
		})
	}
}

// checkStrays checks that the strays got nothing and that the log has one
// line per dropped connection.
func checkStrays(t *testing.T, s *strays, log string, workers int, procs bool) {
	t.Helper()
	for _, err := range s.errs {
		t.Error(err)
	}
	rings := workers
	if procs {
		rings = 1 // the others opened in the worker processes
	}
	if len(s.received) != len(strayKinds)*2 {
		t.Errorf("strays of %d kinds, want %d (every kind at the coordinator and %d ring listeners)", len(s.received), len(strayKinds)*2, rings)
	}
	for k, n := range s.received {
		if n != 0 {
			t.Errorf("%s stray received %d bytes, want 0", k, n)
		}
	}
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if log == "" {
		lines = nil
	}
	// Strays queued ahead of the workers are mostly dropped while the
	// rendezvous waits; those still greeting when it ends (they send
	// nothing, or half a greeting) are closed without a line.
	if len(lines) < 1 || len(lines) > len(strayKinds)*(1+rings) {
		t.Errorf("%d log lines, want 1 to %d:\n%s", len(lines), len(strayKinds)*(1+rings), log)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "dist: ") || !strings.Contains(l, "dropped a connection from 127.0.0.1:") {
			t.Errorf("log line %q, want \"dist: ROLE: dropped a connection from ADDR: WHY\"", l)
		}
	}
}

// A connection with a wrong token never receives the job; one that says
// nothing is dropped after greetTimeout with one line of log; the
// coordinator keeps waiting and admits the real worker after both.
func TestCoordinatorDropsStrangers(t *testing.T) {
	defer func(d time.Duration) { greetTimeout = d }(greetTimeout)
	greetTimeout = 200 * time.Millisecond
	tok := testToken(t)
	var log syncBuffer
	co, err := newCoordinator(2, "127.0.0.1:1", tok, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	errc := make(chan error, 1)
	go func() { errc <- co.gather(context.Background(), time.Minute) }()

	silent, err := net.Dial("tcp4", co.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	other := testToken(t)
	m, err := join(context.Background(), co.Addr(), 1, other, 10*time.Second)
	if err == nil {
		m.Close()
		t.Fatalf("a worker with a wrong token received the job %+v", m.job)
	}
	for t0 := time.Now(); strings.Count(log.String(), "\n") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Since(t0) > 10*time.Second {
			t.Fatalf("after 10 s (greeting deadline 200 ms) the log holds:\n%s", log.String())
		}
	}
	select {
	case err := <-errc:
		t.Fatalf("gather ended on strangers: %v", err)
	default:
	}
	real, err := net.Dial("tcp4", co.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	fmt.Fprintf(real, "{\"protocol\":%q,\"token\":%q,\"rank\":1,\"ring\":\"127.0.0.1:2\"}\n", protocol, tok)
	if err := <-errc; err != nil {
		t.Fatalf("gather: %v", err)
	}
	if co.conns[1] == nil || co.ring[1] != "127.0.0.1:2" {
		t.Errorf("worker 1 not admitted: ring %q", co.ring)
	}
	got := log.String()
	for _, want := range []string{"hello without this run's token", "i/o timeout"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q, want a line saying %q", got, want)
		}
	}
	if n := strings.Count(got, "\n"); n != 2 {
		t.Errorf("%d log lines, want 2:\n%s", n, got)
	}
}

// A worker process is told the token in its environment, checked before
// it connects; errors name the variable but never quote the value.
func TestRunWorkerNeedsToken(t *testing.T) {
	t.Setenv(EnvCoordinator, "127.0.0.1:1")
	t.Setenv(EnvRank, "1")
	for _, v := range []string{"", "secret", strings.Repeat("zz", tokenLen), strings.Repeat("ab", tokenLen-1)} {
		t.Setenv(EnvToken, v)
		err := RunWorker(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), EnvToken) || (v != "" && strings.Contains(err.Error(), v)) {
			t.Errorf("token %q: error %v, want one naming %s without quoting it", v, err, EnvToken)
		}
	}
}

// Tokens are 32 bytes of crypto/rand in hex, and read back.
func TestToken(t *testing.T) {
	a, b := testToken(t), testToken(t)
	if a == b {
		t.Errorf("two tokens are both %s", a)
	}
	s := a.String()
	if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		t.Errorf("token %q, want 64 lowercase hex digits", s)
	}
	if p, err := parseToken(s); err != nil || p != a {
		t.Errorf("parseToken(%q) = %s, %v", s, p, err)
	}
	if !a.isHex(s) || a.isHex(b.String()) || a.isHex(strings.ToUpper(s)) || a.isHex(s[:63]) {
		t.Errorf("isHex accepts the wrong token or refuses the right one")
	}
}
