package sim

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/netsim"
)

// Op is a collective operation, as a collective benchmark times it.
type Op int

// The collective operations.
const (
	OpAllReduce     Op = iota // every rank ends with the sum of all ranks' S bytes
	OpReduceScatter           // every rank ends with its S/p of the sum
	OpAllGather               // every rank starts with S/p and ends with all S
	OpBroadcast               // S from the first rank to every other
	OpAllToAll                // every rank sends S/p to every other
	OpSendRecv                // every rank sends S to the next, as nccl-tests' sendrecv
)

var opNames = [...]string{"all-reduce", "reduce-scatter", "all-gather", "broadcast", "all-to-all", "send-recv"}

// String returns the op's name as ParseOp reads it.
func (o Op) String() string {
	if o < 0 || int(o) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// ParseOp returns the op named s: all-reduce, reduce-scatter, all-gather,
// broadcast, all-to-all or send-recv.
func ParseOp(s string) (Op, error) {
	for i, n := range opNames {
		if s == n {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown collective %q; want one of %q", ErrConfig, s, opNames[:])
}

// netsim returns the simulator's algorithm for op under exchange a: NCCL
// runs every op as NCCL does; otherwise the all-reduce is a's, the
// reduce-scatter and all-gather halving-doubling's for HalvingDoubling on
// a power of two of ranks and else the ring's, the broadcast the tree's
// for Tree and DoubleTree and else the ring's chain, and all-to-all and
// send/recv have one schedule.
func (o Op) netsim(a Algorithm, ranks int) netsim.Algorithm {
	switch {
	case a == NCCL || o == OpAllReduce:
		return a.netsim()
	case (o == OpReduceScatter || o == OpAllGather) && a == HalvingDoubling && ranks&(ranks-1) == 0:
		return netsim.HalvingDoubling
	case o == OpBroadcast && (a == Tree || a == DoubleTree):
		return netsim.Tree
	}
	return netsim.Ring
}

// AllReduceTime is CollectiveTime of an all-reduce.
func AllReduceTime(c Config, size units.Bytes) (units.Seconds, error) {
	return CollectiveTime(c, OpAllReduce, size)
}

// CollectiveTime returns the time one collective op of size bytes takes
// over every rank of c, alone on c's network, with c.Comm.Algorithm (see
// Op's algorithms; NCCL chooses as NCCL does, with c.Comm.NCCLAlgo and
// NCCLProto), from the call until the last rank has its result, as a
// collective benchmark such as nccl-tests times it. size is the whole
// buffer as nccl-tests counts it: each rank's for all-reduce and
// broadcast, the full output of all-gather and input of reduce-scatter,
// each rank's send buffer for all-to-all and send/recv. Only the
// placement (Nodes, DevicesPerNode or Placement), Network and Comm of c are used; its
// compute, memory and steps are not, and need not be set. The parameter
// servers are not a collective: their algorithms are refused.
func CollectiveTime(c Config, op Op, size units.Bytes) (units.Seconds, error) {
	n, err := NewCollectives(c)
	if err != nil {
		return 0, err
	}
	return n.Time(op, size)
}

// Collectives is c's network built once, on which Time times one
// collective after another: a search that times many collectives on the
// same ranks builds their network (most of a collective's cost on
// thousands of ranks) once. Each collective runs alone, after the one
// before has finished; a Collectives is not safe for concurrent use.
type Collectives struct {
	c    Config
	s    event.Scheduler
	topo *netsim.Topology
}

// NewCollectives builds c's network for Time. Only the placement,
// Network and Comm of c are used; the parameter servers are refused.
func NewCollectives(c Config) (*Collectives, error) {
	if c.Comm.Algorithm == ParameterServer || c.Comm.Algorithm == AsyncParameterServer {
		return nil, fmt.Errorf("%w: %v is not a collective", ErrConfig, c.Comm.Algorithm)
	}
	// Compute, memory and steps are not simulated: neutral values pass
	// validate.
	c.MicroBatch, c.Accumulation, c.Stages, c.Steps, c.TraceSteps = 1, 1, 1, 1, 0
	c.Compute = Compute{PerSample: 1}
	c.Memory = Memory{}
	c.Comm.Layers = nil
	c.Input = Input{}
	if err := c.validate(); err != nil {
		return nil, err
	}
	n := &Collectives{c: c}
	topo, err := netsim.NewTopology(&n.s, c.topology())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	n.topo = topo
	return n, nil
}

// Time is CollectiveTime of op at size on n's network: the same time,
// from the call until the last rank has its result.
func (n *Collectives) Time(op Op, size units.Bytes) (units.Seconds, error) {
	if op < 0 || int(op) >= len(opNames) {
		return 0, fmt.Errorf("%w: unknown collective %d; want one of %q", ErrConfig, int(op), opNames[:])
	}
	if !positive(float64(size)) {
		return 0, fmt.Errorf("%w: %v of %v bytes", ErrConfig, op, float64(size))
	}
	var t units.Seconds
	done := false
	alg := op.netsim(n.c.Comm.Algorithm, n.c.Ranks())
	if err := n.topo.Collective(netsim.Op(op), alg, size, nil, func(r *netsim.Result) { t, done = r.Time(), true }); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	n.s.Run()
	if !done {
		return 0, fmt.Errorf("%w: the %v of %v over %d ranks did not finish", ErrConfig, op, size, n.c.Ranks())
	}
	return t, nil
}
