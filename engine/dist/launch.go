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
// coordinator at addr. Each process is killed when ctx is done; on Linux
// it is also killed when this process dies (Pdeathsig), and in any case
// it ends when its coordinator connection closes. A process that exits
// with an error calls cancel, which ends the run.
func spawn(ctx context.Context, cancel context.CancelFunc, sp *Spawn, addr string, w int, timeout time.Duration) (*procs, error) {
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
		out = &lockedWriter{w: sp.Stderr}
	}
	for r := 1; r < w; r++ {
		cmd := exec.CommandContext(ctx, path, sp.Args...)
		cmd.Env = append(append(os.Environ(), sp.Env...), EnvCoordinator+"="+addr, EnvRank+"="+strconv.Itoa(r))
		p.tails[r] = &tail{}
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

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(b), nil
}

// quote returns the tail as an indented block after a newline, or "".
func (t *tail) quote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	return "; its output ends:\n\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// lockedWriter serialises writes of several processes' output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
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
