package netsim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// TestStreamLimit: a limited stream alone moves at its limit; beside an
// unlimited flow on one link, max-min gives the limited one its limit and
// the other the rest, equal share gives the other half the link.
func TestStreamLimit(t *testing.T) {
	const B, L, S = 10e9, 1e9, 1e9
	for _, sharing := range []Sharing{MaxMin, EqualShare} {
		var s event.Scheduler
		n := NewNetwork(&s)
		n.Sharing = sharing
		l := n.AddLink("l", B, 0)
		b := n.NewPathBuilder()
		b.AddLimited(0, L, l)
		limited := b.Path()
		if limited.Limit() != L || limited.Rate() != L {
			t.Errorf("limit %v, rate %v; want %v", limited.Limit(), limited.Rate(), L)
		}
		free := n.NewPath(0, l)
		var endL, endF units.Seconds
		n.Transfer(limited, S, func(*Flow) { endL = s.Now() })
		n.Transfer(free, S, func(*Flow) { endF = s.Now() })
		s.Run()
		other := B - L
		if sharing == EqualShare {
			other = B / 2
		}
		if wantL, wantF := S/L, S/other; !near(float64(endL), wantL, 1e-12) || !near(float64(endF), wantF, 1e-12) {
			t.Errorf("%v: limited ends at %v, free at %v; want %v and %v", sharing, endL, endF, wantL, wantF)
		}
	}
	defer func() {
		if r := recover(); r != badLimit {
			t.Errorf("limit 0: panic %v, want %q", r, badLimit)
		}
	}()
	var s event.Scheduler
	NewNetwork(&s).NewPathBuilder().AddLimited(0, 0)
}

// tcpCluster is 4 nodes of 4 ranks on one 50 Gbit/s NIC each, at
// efficiency 0.94, whose transport moves at most perFlow on one stream.
func tcpCluster(perFlow units.BytesPerSec, streams int) Config {
	c := twoLevel(16, 4, 1, 1)
	c.NIC.Bandwidth, c.Efficiency = 50e9/8, 0.94
	c.PerFlow, c.Streams = perFlow, streams
	return c
}

// TestPerFlowClosedForms: a ring over 4 nodes of 4 crosses each NIC with
// one stream, which moves at min(NIC·e, streams·perFlow); hierarchical's
// four rails share each NIC, so each of its streams between nodes moves
// at min(NIC·e/4, streams·perFlow). The closed forms of the package
// documentation then hold with that beta, for 10 Gbit/s per stream and
// 1, 4 and 16 streams (16 leaves the NIC the bottleneck for the ring, 1
// and 4 the stream).
func TestPerFlowClosedForms(t *testing.T) {
	const p, k, N = 16, 4, 4
	const S = 64 * units.MiB
	x := float64(S)
	perFlow := units.BytesPerSec(10e9 / 8)
	nic := 50e9 / 8 * 0.94
	alpha := alphaNet()
	for _, streams := range []int{1, 4, 16} {
		lim := float64(streams) * float64(perFlow)
		cfg := tcpCluster(perFlow, streams)
		res := runAllReduce(t, cfg, Ring, S, nil)
		if want := ringForm(p, x, alpha, math.Min(nic, lim)); !near(float64(res.Time()), want, 1e-9) {
			t.Errorf("ring, %d streams: %v s, want %v s", streams, float64(res.Time()), want)
		}
		res = runAllReduce(t, cfg, Hierarchical, S, nil)
		intra := 2 * float64(k-1) * (float64(intraLat) + x/k/float64(intraBW))
		if want := intra + ringForm(N, x/k, alpha, math.Min(nic/k, lim)); !near(float64(res.Time()), want, 1e-9) {
			t.Errorf("hierarchical, %d streams: %v s, want %v s", streams, float64(res.Time()), want)
		}
	}
	// Without a per-flow limit the NIC alone bounds the stream.
	res := runAllReduce(t, tcpCluster(0, 0), Ring, S, nil)
	if want := ringForm(p, x, alpha, nic); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("ring, no limit: %v s, want %v s", float64(res.Time()), want)
	}
}

// TestPerFlowInsideNode: the limit applies between nodes only; a ring on
// one node's ranks moves at the intra-node port's rate.
func TestPerFlowInsideNode(t *testing.T) {
	const S = 64 * units.MiB
	res := runAllReduce(t, tcpCluster(1e6, 1), Ring, S, []int{0, 1, 2, 3})
	if want := ringForm(4, float64(S), float64(intraLat), float64(intraBW)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("one node: %v s, want %v s", float64(res.Time()), want)
	}
}

// TestStreamsErrors: streams outside [1, MaxStreams] and a negative
// per-flow rate are named.
func TestStreamsErrors(t *testing.T) {
	for _, c := range []struct {
		perFlow units.BytesPerSec
		streams int
		want    string
	}{
		{1e9, MaxStreams + 1, fmt.Sprintf("streams %d is not in [1, %d]", MaxStreams+1, MaxStreams)},
		{1e9, -1, "streams -1 is not in [1,"},
		{-1, 1, "per-flow rate -1 is not a non-negative finite number"},
	} {
		var s event.Scheduler
		_, err := NewTopology(&s, tcpCluster(c.perFlow, c.streams))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("per flow %v, streams %d: error %v, want %q", c.perFlow, c.streams, err, c.want)
		}
	}
}
