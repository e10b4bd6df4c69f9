package sim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// TestAllReduceTimeRing checks AllReduceTime against the closed form of a
// ring all-reduce of S bytes over p ranks whose links each carry β with
// latency α: 2(p−1) steps of S/p bytes, 2(p−1)(α + S/(pβ)).
func TestAllReduceTimeRing(t *testing.T) {
	const alpha, beta = 2e-6, 100e9
	for _, p := range []int{2, 4, 8} {
		for _, S := range []units.Bytes{1 << 10, 1 << 20, 1 << 30} {
			c := Config{Nodes: 1, DevicesPerNode: p, Network: Network{Intra: Link{Bandwidth: beta, Latency: alpha}}, Comm: Comm{Algorithm: Ring}}
			got, err := AllReduceTime(c, S)
			if err != nil {
				t.Fatal(err)
			}
			want := 2 * float64(p-1) * (alpha + float64(S)/(float64(p)*beta))
			if math.Abs(float64(got)/want-1) > 1e-9 {
				t.Errorf("p %d, S %v: %v, want %v", p, S, float64(got), want)
			}
		}
	}
}

// TestAllReduceTimeRefuses checks the configurations AllReduceTime refuses.
func TestAllReduceTimeRefuses(t *testing.T) {
	ok := Config{Nodes: 1, DevicesPerNode: 2, Network: Network{Intra: Link{Bandwidth: 1e9, Latency: 1e-6}}}
	for name, tc := range map[string]struct {
		c Config
		s units.Bytes
	}{
		"parameter server": {Config{Nodes: 2, DevicesPerNode: 1, Comm: Comm{Algorithm: ParameterServer, Servers: 1}}, 1},
		"no bytes":         {ok, 0},
		"no nodes":         {Config{DevicesPerNode: 2}, 1},
	} {
		if _, err := AllReduceTime(tc.c, tc.s); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}
