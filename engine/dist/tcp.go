package dist

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"time"
	"unsafe"
)

// errProtocol is wrapped by errors about messages that break the ring or
// rendezvous protocol.
var errProtocol = errors.New("protocol error")

// protocol names the rendezvous protocol and its version.
const protocol = "scaleplan-dist/1"

// ringMagic starts the greeting on a ring connection.
var ringMagic = [8]byte{'s', 'p', 'd', 'i', 's', 't', 0, 1}

// littleEndian reports whether float32 slices can be sent as they lie in
// memory: the wire format is little-endian IEEE 754.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// bytesOf returns the memory of f as bytes (little-endian machines only).
func bytesOf(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// tcpTransport is one rank's end of a ring of TCP connections: it writes
// to the connection to the next rank and reads from the one from the
// previous rank. A message is an 8-byte header (sequence number and value
// count, uint32 little-endian) followed by the values as little-endian
// float32. Every read and write has a deadline of timeout.
type tcpTransport struct {
	rank, size int
	next, prev net.Conn
	timeout    time.Duration
	seq        uint32
	scratch    []float32
	wbuf, rbuf []byte // encoding buffers on big-endian machines
	werr       chan error
	closeOnce  sync.Once
}

func (t *tcpTransport) Rank() int { return t.rank }
func (t *tcpTransport) Size() int { return t.size }

func (t *tcpTransport) SendRecv(src, dst []float32, add bool) error {
	if t.size == 1 {
		panic(badSelfSend)
	}
	seq := t.seq
	t.seq++
	go func() { t.werr <- t.write(seq, src) }()
	rerr := t.read(seq, dst, add)
	if rerr != nil {
		t.Close() // unblocks the writer
	}
	werr := <-t.werr
	if rerr != nil {
		return fmt.Errorf("receive from rank %d: %w", (t.rank+t.size-1)%t.size, rerr)
	}
	if werr != nil {
		t.Close()
		return fmt.Errorf("send to rank %d: %w", (t.rank+1)%t.size, werr)
	}
	return nil
}

func (t *tcpTransport) write(seq uint32, src []float32) error {
	if err := t.next.SetWriteDeadline(time.Now().Add(t.timeout)); err != nil {
		return err
	}
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], seq)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(src)))
	payload := bytesOf(src)
	if !littleEndian {
		t.wbuf = encode(t.wbuf, src)
		payload = t.wbuf
	}
	bufs := net.Buffers{hdr[:], payload}
	_, err := bufs.WriteTo(t.next)
	return err
}

func (t *tcpTransport) read(seq uint32, dst []float32, add bool) error {
	if err := t.prev.SetReadDeadline(time.Now().Add(t.timeout)); err != nil {
		return err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(t.prev, hdr[:]); err != nil {
		return err
	}
	gs, gn := binary.LittleEndian.Uint32(hdr[:4]), binary.LittleEndian.Uint32(hdr[4:])
	if gs != seq || int(gn) != len(dst) {
		return fmt.Errorf("message %d of %d values, want message %d of %d values: %w", gs, gn, seq, len(dst), errProtocol)
	}
	v := dst
	if add {
		if cap(t.scratch) < len(dst) {
			t.scratch = make([]float32, len(dst))
		}
		v = t.scratch[:len(dst)]
	}
	if littleEndian {
		if _, err := io.ReadFull(t.prev, bytesOf(v)); err != nil {
			return err
		}
	} else {
		if cap(t.rbuf) < 4*len(v) {
			t.rbuf = make([]byte, 4*len(v))
		}
		b := t.rbuf[:4*len(v)]
		if _, err := io.ReadFull(t.prev, b); err != nil {
			return err
		}
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	if add {
		combine(dst, v, true)
	}
	return nil
}

// encode writes f as little-endian float32 into buf, grown as needed.
func encode(buf []byte, f []float32) []byte {
	if cap(buf) < 4*len(f) {
		buf = make([]byte, 4*len(f))
	}
	buf = buf[:4*len(f)]
	for i, v := range f {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return buf
}

// Close closes both connections.
func (t *tcpTransport) Close() error {
	var err error
	t.closeOnce.Do(func() {
		if t.next != nil {
			err = t.next.Close()
		}
		if t.prev != nil {
			err = errors.Join(err, t.prev.Close())
		}
	})
	return err
}

// listenLoopback listens on an ephemeral port of 127.0.0.1.
func listenLoopback() (*net.TCPListener, error) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	return ln, nil
}

// connectRing connects rank to its neighbours: it dials ring[rank+1] and
// accepts the connection of rank−1 on ln (whose address is ring[rank]),
// checking the greetings. ln is closed on return. Both ends give up
// after timeout or when ctx is done.
func connectRing(ctx context.Context, ln *net.TCPListener, ring []string, rank int, timeout time.Duration) (*tcpTransport, error) {
	size := len(ring)
	t := &tcpTransport{rank: rank, size: size, timeout: timeout, werr: make(chan error, 1)}
	defer ln.Close()
	if size == 1 {
		return t, nil
	}
	deadline := time.Now().Add(timeout)
	ln.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()

	type dialed struct {
		c   net.Conn
		err error
	}
	dc := make(chan dialed, 1)
	go func() {
		d := net.Dialer{Deadline: deadline}
		c, err := d.DialContext(ctx, "tcp4", ring[(rank+1)%size])
		if err == nil {
			var hello [16]byte
			copy(hello[:8], ringMagic[:])
			binary.LittleEndian.PutUint32(hello[8:12], uint32(rank))
			binary.LittleEndian.PutUint32(hello[12:], uint32(size))
			c.SetWriteDeadline(deadline)
			if _, err = c.Write(hello[:]); err != nil {
				c.Close()
			}
		}
		dc <- dialed{c, err}
	}()
	prev, aerr := acceptRing(ln, rank, size, deadline)
	d := <-dc
	if aerr != nil || d.err != nil {
		if prev != nil {
			prev.Close()
		}
		if d.c != nil && d.err == nil {
			d.c.Close()
		}
		if aerr != nil {
			return nil, fmt.Errorf("rank %d: accept from rank %d: %w", rank, (rank+size-1)%size, errors.Join(aerr, ctx.Err()))
		}
		return nil, fmt.Errorf("rank %d: connect to rank %d at %s: %w", rank, (rank+1)%size, ring[(rank+1)%size], d.err)
	}
	t.prev, t.next = prev, d.c
	setNoDelay(t.prev)
	setNoDelay(t.next)
	return t, nil
}

// acceptRing accepts the previous rank's connection and checks its
// greeting.
func acceptRing(ln *net.TCPListener, rank, size int, deadline time.Time) (net.Conn, error) {
	c, err := ln.Accept()
	if err != nil {
		return nil, err
	}
	c.SetReadDeadline(deadline)
	var hello [16]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	from, n := int(binary.LittleEndian.Uint32(hello[8:12])), int(binary.LittleEndian.Uint32(hello[12:]))
	if [8]byte(hello[:8]) != ringMagic || from != (rank+size-1)%size || n != size {
		c.Close()
		return nil, fmt.Errorf("greeting from rank %d of %d, want rank %d of %d: %w", from, n, (rank+size-1)%size, size, errProtocol)
	}
	return c, nil
}

func setNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
}

// Rendezvous messages, one JSON object per line on the coordinator
// connection between worker 0 and worker r > 0.
type (
	// hello is the first message of worker r.
	hello struct {
		Protocol string `json:"protocol"`
		Rank     int    `json:"rank"`
		Ring     string `json:"ring"` // address of the worker's ring listener
	}
	// job is worker 0's answer: the run and every worker's ring address.
	job struct {
		Config Config   `json:"config"`
		Ring   []string `json:"ring"`
	}
	// status is worker r's last message.
	status struct {
		Error string `json:"error,omitempty"`
		Hash  uint64 `json:"hash,omitempty"`
	}
)

// coordinator is worker 0's side of the rendezvous: it accepts the other
// workers' coordinator connections, sends them the job and collects their
// final status.
type coordinator struct {
	ln    *net.TCPListener
	size  int
	conns []*jsonConn // by rank; conns[0] is nil
	ring  []string
}

// jsonConn exchanges JSON lines.
type jsonConn struct {
	c net.Conn
	r *bufio.Reader
}

func (j *jsonConn) send(v any, deadline time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.c.SetWriteDeadline(deadline)
	_, err = j.c.Write(append(b, '\n'))
	return err
}

func (j *jsonConn) recv(v any, deadline time.Time) error {
	j.c.SetReadDeadline(deadline)
	line, err := j.r.ReadBytes('\n')
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errProtocol, err)
	}
	return nil
}

// newCoordinator listens for size−1 workers; ringAddr is worker 0's ring
// listener.
func newCoordinator(size int, ringAddr string) (*coordinator, error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	c := &coordinator{ln: ln, size: size, conns: make([]*jsonConn, size), ring: make([]string, size)}
	c.ring[0] = ringAddr
	return c, nil
}

// Addr returns the address workers connect to.
func (c *coordinator) Addr() string { return c.ln.Addr().String() }

// gather accepts the other workers' hellos until each rank 1..size−1 has
// greeted, or timeout, or ctx is done.
func (c *coordinator) gather(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c.ln.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.ln.Close() })
	defer stop()
	for joined := 1; joined < c.size; {
		nc, err := c.ln.Accept()
		if err != nil {
			return fmt.Errorf("waiting for %d of %d workers to join: %w", c.size-joined, c.size-1, errors.Join(err, ctx.Err()))
		}
		j := &jsonConn{c: nc, r: bufio.NewReader(nc)}
		var h hello
		if err := j.recv(&h, deadline); err != nil {
			nc.Close()
			return fmt.Errorf("worker greeting: %w", err)
		}
		if h.Protocol != protocol || h.Rank < 1 || h.Rank >= c.size || c.conns[h.Rank] != nil {
			nc.Close()
			return fmt.Errorf("greeting %q rank %d, want %q and a new rank in [1, %d): %w", h.Protocol, h.Rank, protocol, c.size, errProtocol)
		}
		c.conns[h.Rank], c.ring[h.Rank] = j, h.Ring
		joined++
	}
	return nil
}

// start sends every worker the job.
func (c *coordinator) start(cfg Config, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for r, j := range c.conns[1:] {
		if err := j.send(job{Config: cfg, Ring: c.ring}, deadline); err != nil {
			return fmt.Errorf("send job to worker %d: %w", r+1, err)
		}
	}
	return nil
}

// finish collects every worker's status and, if same, checks that its
// parameters hash to want.
func (c *coordinator) finish(want uint64, same bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var errs []error
	for r, j := range c.conns[1:] {
		var st status
		if err := j.recv(&st, deadline); err != nil {
			errs = append(errs, fmt.Errorf("worker %d: no status: %w", r+1, err))
			continue
		}
		switch {
		case st.Error != "":
			errs = append(errs, fmt.Errorf("worker %d: %s", r+1, st.Error))
		case same && st.Hash != want:
			errs = append(errs, fmt.Errorf("worker %d: parameters hash to %016x, worker 0's to %016x: replicas diverged", r+1, st.Hash, want))
		}
	}
	return errors.Join(errs...)
}

// Close closes the listener and every connection; workers still waiting
// for the coordinator see an error.
func (c *coordinator) Close() {
	c.ln.Close()
	for _, j := range c.conns {
		if j != nil {
			j.c.Close()
		}
	}
}

// member is worker r's side of the rendezvous.
type member struct {
	conn *jsonConn
	ln   *net.TCPListener
	job  job
}

// join connects worker rank to the coordinator at addr, greets it and
// waits for the job.
func join(ctx context.Context, addr string, rank int, timeout time.Duration) (*member, error) {
	deadline := time.Now().Add(timeout)
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, "tcp4", addr)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("worker %d: connect to coordinator %s: %w", rank, addr, err)
	}
	m := &member{conn: &jsonConn{c: nc, r: bufio.NewReader(nc)}, ln: ln}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if err := m.conn.send(hello{Protocol: protocol, Rank: rank, Ring: ln.Addr().String()}, deadline); err != nil {
		m.Close()
		return nil, fmt.Errorf("worker %d: greet coordinator: %w", rank, err)
	}
	if err := m.conn.recv(&m.job, deadline); err != nil {
		m.Close()
		return nil, fmt.Errorf("worker %d: wait for the job: %w", rank, errors.Join(err, ctx.Err()))
	}
	if len(m.job.Ring) != m.job.Config.Workers || rank >= len(m.job.Ring) {
		m.Close()
		return nil, fmt.Errorf("worker %d: job for %d workers with %d ring addresses: %w", rank, m.job.Config.Workers, len(m.job.Ring), errProtocol)
	}
	return m, nil
}

// Close closes the member's connections.
func (m *member) Close() {
	m.conn.c.Close()
	m.ln.Close()
}
