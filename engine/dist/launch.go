package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"scaleplan/internal/procout"
)

// procs are the worker processes of a run.
type procs struct {
	ctx   context.Context
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []error // by rank; nil for success
	tails []*tail
}

// spawn starts workers 1 to w−1 as processes of sp, told to join the
// coordinator at addr with tok. The token goes in the environment
// (EnvToken), which other users cannot read, never on the command line,
// which ps shows to everyone. Each process is killed when ctx is done; on
// Linux it is also killed when this process dies (Pdeathsig), and in any
// case it ends when its coordinator connection closes. A process that
// exits with an error calls cancel, which ends the run.
func spawn(ctx context.Context, cancel context.CancelFunc, sp *Spawn, addr string, tok token, w int) (*procs, error) {
	path := sp.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this program to start workers: %w", err)
		}
		path = exe
	}
	p := &procs{ctx: ctx, errs: make([]error, w), tails: make([]*tail, w)}
	var out io.Writer = io.Discard
	if sp.Stderr != nil {
		out = &procout.Locked{W: sp.Stderr}
	}
	for r := 1; r < w; r++ {
		cmd := exec.CommandContext(ctx, path, sp.Args...)
		cmd.Env = append(append(os.Environ(), sp.Env...), EnvCoordinator+"="+addr, EnvRank+"="+strconv.Itoa(r), EnvToken+"="+tok.String())
		p.tails[r] = &tail{procout.Tail{Max: tailBytes}}
		lw := &prefixWriter{w: out, prefix: fmt.Sprintf("worker %d: ", r)}
		cmd.Stdout = io.MultiWriter(lw, p.tails[r])
		cmd.Stderr = cmd.Stdout
		cmd.WaitDelay = 5 * time.Second
		setDeathSignal(cmd)
		if err := cmd.Start(); err != nil {
			cancel()
			p.wg.Wait()
			return nil, fmt.Errorf("start worker %d (%s): %w", r, path, err)
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			err := cmd.Wait()
			if err != nil && ctx.Err() == nil {
				// It failed on its own: end the run.
				p.mu.Lock()
				p.errs[r] = fmt.Errorf("worker %d (pid %d): %w%s", r, cmd.Process.Pid, err, p.tails[r].quote())
				p.mu.Unlock()
				cancel()
			}
		}()
	}
	return p, nil
}

// wait waits for every process to exit and returns the errors of those
// that failed on their own (not because the run was cancelled).
func (p *procs) wait() error {
	p.wg.Wait()
	return errors.Join(p.errs...)
}

// tail keeps the last tailBytes of a worker process's output.
type tail struct{ procout.Tail }

const tailBytes = 2048

// quote returns the tail as an indented block after a newline, or "".
func (t *tail) quote() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	return "; its output ends:\n\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// prefixWriter writes whole lines to w, each starting with prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	part   []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	n := len(b)
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(p.prefix), p.part[:i+1]...)
		p.part = p.part[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return n, err
		}
	}
	return n, nil
}
