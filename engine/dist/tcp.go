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
const protocol = "scaleplan-dist/2"

// ringMagic starts the greeting on a ring connection.
var ringMagic = [8]byte{'s', 'p', 'd', 'i', 's', 't', 0, 2}

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

// listenLoopback listens on an ephemeral port of 127.0.0.1 for the
// rendezvous role ("coordinator", "ring").
func listenLoopback(role string) (*net.TCPListener, error) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	if listened != nil {
		listened(role, ln.Addr().String())
	}
	return ln, nil
}

// ringHelloLen is the length of a ring greeting: ringMagic, the sender's
// rank and the ring's size (uint32 little-endian), the run's token.
const ringHelloLen = 8 + 4 + 4 + tokenLen

// connectRing connects rank to its neighbours: it dials ring[rank+1] and
// accepts the connection of rank−1 on ln (whose address is ring[rank]),
// each greeting with tok. Connections to ln that do not greet with tok
// are dropped with a line on log. ln is closed on return. Both ends give
// up after timeout or when ctx is done.
func connectRing(ctx context.Context, ln *net.TCPListener, ring []string, rank int, timeout time.Duration, tok token, log io.Writer) (*tcpTransport, error) {
	size := len(ring)
	t := &tcpTransport{rank: rank, size: size, timeout: timeout, werr: make(chan error, 1)}
	defer ln.Close()
	if size == 1 {
		return t, nil
	}
	deadline := time.Now().Add(timeout)
	type dialed struct {
		c   net.Conn
		err error
	}
	dc := make(chan dialed, 1)
	go func() {
		c, err := dialRing(ctx, ring[(rank+1)%size], rank, size, tok, deadline)
		dc <- dialed{c, err}
	}()
	prev, aerr := acceptRing(ctx, ln, rank, size, tok, deadline, log)
	d := <-dc
	if aerr != nil || d.err != nil {
		if prev != nil {
			prev.Close()
		}
		if d.c != nil {
			d.c.Close()
		}
		if aerr != nil {
			return nil, fmt.Errorf("rank %d: accept from rank %d: %w", rank, (rank+size-1)%size, aerr)
		}
		return nil, fmt.Errorf("rank %d: connect to rank %d at %s: %w", rank, (rank+1)%size, ring[(rank+1)%size], d.err)
	}
	t.prev, t.next = prev, d.c
	setNoDelay(t.prev)
	setNoDelay(t.next)
	return t, nil
}

// dialRing connects rank to its successor at addr and greets it.
func dialRing(ctx context.Context, addr string, rank, size int, tok token, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{Deadline: deadline}
	c, err := d.DialContext(ctx, "tcp4", addr)
	if err != nil {
		return nil, err
	}
	var hello [ringHelloLen]byte
	copy(hello[:8], ringMagic[:])
	binary.LittleEndian.PutUint32(hello[8:12], uint32(rank))
	binary.LittleEndian.PutUint32(hello[12:16], uint32(size))
	copy(hello[16:], tok[:])
	c.SetWriteDeadline(deadline)
	if _, err := c.Write(hello[:]); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// acceptRing accepts the previous rank's connection, the first whose
// greeting presents tok; it drops the others.
func acceptRing(ctx context.Context, ln *net.TCPListener, rank, size int, tok token, deadline time.Time, log io.Writer) (net.Conn, error) {
	want := (rank + size - 1) % size
	greet := func(c net.Conn, by time.Time) (net.Conn, error) {
		c.SetReadDeadline(by)
		var hello [ringHelloLen]byte
		if _, err := io.ReadFull(c, hello[:]); err != nil {
			return nil, stray(c, fmt.Errorf("ring greeting: %w", err))
		}
		if [8]byte(hello[:8]) != ringMagic || !tok.is(hello[16:]) {
			return nil, stray(c, errors.New("ring greeting without this run's token"))
		}
		from, n := int(binary.LittleEndian.Uint32(hello[8:12])), int(binary.LittleEndian.Uint32(hello[12:16]))
		if from != want || n != size {
			c.Close()
			return nil, fmt.Errorf("greeting from rank %d of %d, want rank %d of %d: %w", from, n, want, size, errProtocol)
		}
		return c, nil
	}
	var prev net.Conn
	take := func(c net.Conn) (bool, error) { prev = c; return true, nil }
	drop := func(c net.Conn) { c.Close() }
	if err := admit(ctx, ln, deadline, fmt.Sprintf("rank %d's ring", rank), log, greet, take, drop); err != nil {
		return nil, err
	}
	return prev, nil
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
		Token    string `json:"token"` // the run's token in hex
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

// maxHello bounds the length of a hello line in bytes.
const maxHello = 4096

// coordinator is worker 0's side of the rendezvous: it accepts the other
// workers' coordinator connections, sends them the job and collects their
// final status. Only connections that presented the run's token are
// kept.
type coordinator struct {
	ln    *net.TCPListener
	size  int
	tok   token
	log   io.Writer   // receives a line per dropped connection
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
	return decodeLine(line, v)
}

// decodeLine decodes one JSON line into v, refusing unknown fields.
func decodeLine(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errProtocol, err)
	}
	return nil
}

// newCoordinator listens for size−1 workers presenting tok; ringAddr is
// worker 0's ring listener. Connections dropped for want of tok are
// logged to log (nil: discarded).
func newCoordinator(size int, ringAddr string, tok token, log io.Writer) (*coordinator, error) {
	ln, err := listenLoopback("coordinator")
	if err != nil {
		return nil, err
	}
	c := &coordinator{ln: ln, size: size, tok: tok, log: log, conns: make([]*jsonConn, size), ring: make([]string, size)}
	c.ring[0] = ringAddr
	return c, nil
}

// Addr returns the address workers connect to.
func (c *coordinator) Addr() string { return c.ln.Addr().String() }

// joined is a worker's hello and its connection.
type joined struct {
	j *jsonConn
	h hello
}

// gather accepts the other workers' hellos until each rank 1..size−1 has
// greeted, or timeout, or ctx is done. Connections that send garbage, a
// wrong token or nothing within greetTimeout, or close, are dropped and
// gather keeps waiting; a worker with the right token and a bad hello
// (another protocol, a rank out of range or taken) is an error.
func (c *coordinator) gather(ctx context.Context, timeout time.Duration) error {
	n := 1
	take := func(m joined) (bool, error) {
		h := m.h
		if h.Protocol != protocol || h.Rank < 1 || h.Rank >= c.size || c.conns[h.Rank] != nil {
			m.j.c.Close()
			return false, fmt.Errorf("greeting %q rank %d, want %q and a new rank in [1, %d): %w", h.Protocol, h.Rank, protocol, c.size, errProtocol)
		}
		c.conns[h.Rank], c.ring[h.Rank] = m.j, h.Ring
		n++
		return n == c.size, nil
	}
	drop := func(m joined) { m.j.c.Close() }
	if c.size == 1 {
		return nil
	}
	if err := admit(ctx, c.ln, time.Now().Add(timeout), "coordinator", c.log, c.greet, take, drop); err != nil {
		return fmt.Errorf("waiting for %d of %d workers to join: %w", c.size-n, c.size-1, err)
	}
	return nil
}

// greet reads nc's hello, at most maxHello bytes by deadline, and checks
// its token. It sends nothing.
func (c *coordinator) greet(nc net.Conn, deadline time.Time) (joined, error) {
	nc.SetReadDeadline(deadline)
	br := bufio.NewReader(io.LimitReader(nc, maxHello))
	line, err := br.ReadBytes('\n')
	if err != nil {
		return joined{}, stray(nc, fmt.Errorf("hello: %w", err))
	}
	var h hello
	if err := decodeLine(line, &h); err != nil {
		return joined{}, stray(nc, fmt.Errorf("hello: %w", err))
	}
	if !c.tok.isHex(h.Token) {
		return joined{}, stray(nc, errors.New("hello without this run's token"))
	}
	if br.Buffered() > 0 {
		nc.Close()
		return joined{}, fmt.Errorf("worker %d sent more than its hello: %w", h.Rank, errProtocol)
	}
	return joined{&jsonConn{c: nc, r: bufio.NewReader(nc)}, h}, nil
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

// join connects worker rank to the coordinator at addr, greets it with
// tok and waits for the job.
func join(ctx context.Context, addr string, rank int, tok token, timeout time.Duration) (*member, error) {
	deadline := time.Now().Add(timeout)
	ln, err := listenLoopback("ring")
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
	if err := m.conn.send(hello{Protocol: protocol, Token: tok.String(), Rank: rank, Ring: ln.Addr().String()}, deadline); err != nil {
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
