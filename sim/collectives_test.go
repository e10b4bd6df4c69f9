package sim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// TestCollectivesReuse times every op at three sizes, one after another
// on one Collectives, against the ring closed forms of
// TestCollectiveTimeOps: a network built once times each collective as a
// fresh one does.
func TestCollectivesReuse(t *testing.T) {
	const alpha, beta = 2e-6, 100e9
	const p = 4
	c := Config{Nodes: 1, DevicesPerNode: p, Network: Network{Intra: Link{Bandwidth: beta, Latency: alpha}}}
	n, err := NewCollectives(c)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, S := range []units.Bytes{1 << 30, 1 << 10, 1 << 20} {
			s := float64(S)
			for op, w := range map[Op]float64{
				OpAllReduce:     2 * (p - 1) * (alpha + s/(p*beta)),
				OpReduceScatter: (p - 1) * (alpha + s/(p*beta)),
				OpAllToAll:      alpha + (p-1)*s/(p*beta),
				OpSendRecv:      alpha + s/beta,
			} {
				got, err := n.Time(op, S)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(float64(got)/w-1) > 1e-9 {
					t.Errorf("%v of %v after others: %v, want %v", op, S, float64(got), w)
				}
			}
		}
	}
	for _, bad := range []struct {
		op Op
		s  units.Bytes
	}{{OpAllReduce, 0}, {Op(-1), 1}, {Op(len(opNames)), 1}} {
		if _, err := n.Time(bad.op, bad.s); !errors.Is(err, ErrConfig) {
			t.Errorf("op %d of %v: %v, want ErrConfig", int(bad.op), bad.s, err)
		}
	}
	if _, err := NewCollectives(Config{Nodes: 2, DevicesPerNode: 1, Comm: Comm{Algorithm: ParameterServer, Servers: 1}}); !errors.Is(err, ErrConfig) {
		t.Errorf("parameter server: %v, want ErrConfig", err)
	}
}
