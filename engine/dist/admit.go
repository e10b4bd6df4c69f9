package dist

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// EnvToken is the environment variable that hands a worker process its
// run's token (see Spawn).
const EnvToken = "SCALEPLAN_DIST_TOKEN"

// tokenLen is the length of a run's token in bytes.
const tokenLen = 32

// token authenticates the workers of one run at its rendezvous: worker 0
// draws it from crypto/rand, hands it to the other workers out of band
// (in memory, or in EnvToken), and every greeting, on the coordinator
// connection and on the ring, must present it.
type token [tokenLen]byte

// newToken draws a token from crypto/rand.
func newToken() (token, error) {
	var t token
	if _, err := rand.Read(t[:]); err != nil {
		return t, fmt.Errorf("draw the run's token: %w", err)
	}
	return t, nil
}

// String returns t as lowercase hex, as EnvToken and the coordinator's
// hello carry it.
func (t token) String() string { return hex.EncodeToString(t[:]) }

// parseToken reads a token in hex. Its errors do not quote s.
func parseToken(s string) (token, error) {
	var t token
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tokenLen {
		return t, fmt.Errorf("a token is %d hex digits, got %d characters", 2*tokenLen, len(s))
	}
	copy(t[:], b)
	return t, nil
}

// is reports whether b holds t's bytes, in time independent of where they
// differ.
func (t token) is(b []byte) bool { return subtle.ConstantTimeCompare(t[:], b) == 1 }

// isHex reports whether s is t in lowercase hex, in time independent of
// where they differ.
func (t token) isHex(s string) bool {
	return subtle.ConstantTimeCompare([]byte(t.String()), []byte(s)) == 1
}

// errStray marks a connection to a rendezvous listener that did not greet
// as a worker of this run: garbage, a wrong token, nothing before its
// deadline, or an early close. admit drops such connections and keeps
// waiting.
var errStray = errors.New("not a worker of this run")

// greetTimeout bounds the wait for one connection's greeting; tests
// shorten it.
var greetTimeout = 5 * time.Second

// listened, if not nil, is called with the role and address of every
// rendezvous listener as it opens; tests use it to send stray
// connections.
var listened func(role, addr string)

// greeted is one accepted connection's greeting, or why it failed.
type greeted[T any] struct {
	v    T
	err  error
	from string
}

// admitter is the state of one admit call.
type admitter struct {
	mu      sync.Mutex
	closed  bool
	pending map[net.Conn]bool
	wg      sync.WaitGroup
}

// admit accepts connections on ln until take reports that it has all it
// needs, deadline passes or ctx is done. Each connection is greeted by
// greet in a goroutine of its own, within greetTimeout (and deadline), so
// that a silent connection holds up nobody. A greeting that fails with
// errStray is dropped (greet has closed the connection) with one line on
// log; any other error of greet or take ends admit with it. take runs on
// admit's goroutine. When admit returns, the connections still greeting
// are closed, and greeted values not taken are passed to drop.
func admit[T any](ctx context.Context, ln *net.TCPListener, deadline time.Time, role string, log io.Writer,
	greet func(net.Conn, time.Time) (T, error), take func(T) (bool, error), drop func(T)) error {
	if log == nil {
		log = io.Discard
	}
	ln.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { ln.SetDeadline(time.Now()) })
	defer stop()
	a := &admitter{pending: map[net.Conn]bool{}}
	quit := make(chan struct{})
	got := make(chan greeted[T])
	acceptErr := make(chan error, 1)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		acceptErr <- a.acceptLoop(ln, func(nc net.Conn) {
			v, err := greet(nc, minTime(deadline, time.Now().Add(greetTimeout)))
			a.done(nc)
			select {
			case got <- greeted[T]{v, err, nc.RemoteAddr().String()}:
			case <-quit:
				if err == nil {
					drop(v)
				}
			}
		})
	}()
	defer func() {
		a.close()
		close(quit)
		ln.SetDeadline(time.Now())
		a.wg.Wait()
	}()
	for {
		select {
		case g := <-got:
			if errors.Is(g.err, errStray) {
				fmt.Fprintf(log, "dist: %s: dropped a connection from %s: %v\n", role, g.from, g.err)
				continue
			}
			if g.err != nil {
				return g.err
			}
			if done, err := take(g.v); done || err != nil {
				return err
			}
		case err := <-acceptErr:
			return errors.Join(err, ctx.Err())
		}
	}
}

// acceptLoop accepts connections on ln and serves each with serve in a
// goroutine of its own, until Accept fails or the admitter closes.
func (a *admitter) acceptLoop(ln *net.TCPListener, serve func(net.Conn)) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return err
		}
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			nc.Close()
			return nil
		}
		a.pending[nc] = true
		a.wg.Add(1)
		a.mu.Unlock()
		go func() {
			defer a.wg.Done()
			serve(nc)
		}()
	}
}

// done notes that nc has greeted (or failed to).
func (a *admitter) done(nc net.Conn) {
	a.mu.Lock()
	delete(a.pending, nc)
	a.mu.Unlock()
}

// close closes the connections still greeting and refuses new ones.
func (a *admitter) close() {
	a.mu.Lock()
	a.closed = true
	for nc := range a.pending {
		nc.Close()
	}
	a.mu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// stray closes c and returns err marked with errStray.
func stray(c net.Conn, err error) error {
	c.Close()
	return fmt.Errorf("%w: %w", errStray, err)
}
