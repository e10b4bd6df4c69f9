package model

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// candidates is a max-heap of boxes by score.
type candidates struct {
	box   []int
	score []float32
}

func (c *candidates) Len() int           { return len(c.box) }
func (c *candidates) Less(i, j int) bool { return c.score[c.box[i]] > c.score[c.box[j]] }
func (c *candidates) Swap(i, j int)      { c.box[i], c.box[j] = c.box[j], c.box[i] }
func (c *candidates) Push(x any)         { c.box = append(c.box, x.(int)) }
func (c *candidates) Pop() any {
	n := len(c.box) - 1
	x := c.box[n]
	c.box = c.box[:n]
	return x
}

// iou returns the intersection over union of boxes a and b (y0, x0, y1,
// x1).
func iou(a, b [4]float32) float32 {
	area := func(c [4]float32) float32 { return (c[2] - c[0]) * (c[3] - c[1]) }
	h := min(a[2], b[2]) - max(a[0], b[0])
	w := min(a[3], b[3]) - max(a[1], b[1])
	if h <= 0 || w <= 0 {
		return 0
	}
	return h * w / (area(a) + area(b) - h*w)
}

// greedyNMSIoUs runs TensorFlow's CPU suppression (DoNMSPerClass: pop the
// best, compare it with the selected boxes newest first until one
// overlaps it by more than 0.7) on the anchors of a level of stride s over
// an h × w image, 3 a location as DeepLearningExamples' TensorFlow 2
// program places them (anchor_scale 8, aspect ratios (1, 1), (1.4, 0.7),
// (0.7, 1.4)), with seeded uniform scores, selecting at most keep, and
// returns the boxes and the IoUs it evaluated.
func greedyNMSIoUs(h, w, s, keep int, rng *rand.Rand) (n int, ious int64) {
	aspects := [3][2]float32{{1, 1}, {1.4, 0.7}, {0.7, 1.4}}
	var boxes [][4]float32
	c := &candidates{}
	for y := s / 2; y < h; y += s {
		for x := s / 2; x < w; x += s {
			for _, a := range aspects {
				hx, hy := float32(8*s)*a[0]/2, float32(8*s)*a[1]/2
				boxes = append(boxes, [4]float32{float32(y) - hy, float32(x) - hx, float32(y) + hy, float32(x) + hx})
				c.score = append(c.score, rng.Float32()+1e-7)
				c.box = append(c.box, len(boxes)-1)
			}
		}
	}
	heap.Init(c)
	var selected []int
	for len(selected) < keep && c.Len() > 0 {
		b := heap.Pop(c).(int)
		keepIt := true
		for j := len(selected) - 1; j >= 0; j-- {
			ious++
			if iou(boxes[b], boxes[selected[j]]) > 0.7 {
				keepIt = false
				break
			}
		}
		if keepIt {
			selected = append(selected, b)
		}
	}
	return len(boxes), ious
}

// TestNMSHostCount checks nmsHost's count of IoUs, k(k−1)/2, against a
// serial run of the suppression on the anchors of P2 and P3 of an 832 ×
// 1344 image, where the boxes far outnumber the 2000 kept: at most 5 %
// more (the suppressed boxes' comparisons).
func TestNMSHostCount(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four million IoUs")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []int{4, 8} {
		n, got := greedyNMSIoUs(832, 1344, s, nmsKeep, rng)
		k := int64(min(n, nmsKeep))
		want := k * (k - 1) / 2
		if r := float64(got) / float64(want); r < 1 || r > 1.05 {
			t.Errorf("stride %d, %d boxes: %d IoUs, closed form %d (ratio %.3f)", s, n, got, want, r)
		}
	}
}

// TestNMSCPUTable checks nmsPush and nmsIoU against the table they are
// taken from, scripts/nmscpu.c's output in testdata/nms-cpu.csv: P2's
// heap time over its boxes and selection time over its IoUs.
func TestNMSCPUTable(t *testing.T) {
	rows := csvRows(t, "testdata/nms-cpu.csv")
	if len(rows) < 2 || strings.Join(rows[0], ",") != "level,boxes,selected,popped,ious,heap_ms,select_ms" || rows[1][0] != "p2" {
		t.Fatalf("table: want the header and P2's row first, got %v", rows)
	}
	v := make([]float64, len(rows[1]))
	for i := 1; i < len(v); i++ {
		var err error
		if v[i], err = strconv.ParseFloat(rows[1][i], 64); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"push", float64(nmsPush), v[5] * 1e-3 / v[1]},
		{"iou", float64(nmsIoU), v[6] * 1e-3 / v[4]},
	} {
		if math.Abs(c.got/c.want-1) > 0.005 {
			t.Errorf("%s: %.4g s, the table's %.4g s", c.name, c.got, c.want)
		}
	}
}

// TestMaskRCNNFrameworks checks the TensorFlow 2 program's operators
// against the PyTorch one's: one host operator whose time is P2's
// suppression of one image by hand (800 × 1344: 200·336·3 = 201,600
// boxes, 1,999,000 IoUs), whatever the batch, and whose work is the five
// levels' of every image (P3 to P5: 50,400, 12,600 and 3,150 boxes
// keeping 2,000; P6: 819 boxes keeping all); no suppression on the
// device, no reads per positive RoI, no anchors and no RPN matching (the
// input pipeline's).
func TestMaskRCNNFrameworks(t *testing.T) {
	p2 := 201600*14.45e-9 + 1999000*13.17e-9
	all := p2 + (50400+12600+3150+819)*14.45e-9 + (3*1999000+819*818/2)*13.17e-9
	for _, batch := range []int{1, 4} {
		tf, err := Ops("maskrcnn-r50-fpn", Shape{Batch: batch, Framework: "tensorflow 2.4"})
		if err != nil {
			t.Fatal(err)
		}
		torch, err := Ops("maskrcnn-r50-fpn", Shape{Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		var host []Op
		for _, o := range tf {
			if o.HostCPU > 0 {
				host = append(host, o)
			}
			if strings.HasSuffix(o.Name, ".nms") || strings.Contains(o.Name, "polygon") ||
				strings.Contains(o.Name, "anchor_generator") || strings.Contains(o.Name, "loss.match") {
				t.Errorf("tensorflow, batch %d: %s in the step", batch, o.Name)
			}
		}
		if len(host) != 1 || math.Abs(float64(host[0].HostCPU)/p2-1) > 1e-9 || !host[0].Sync {
			t.Errorf("tensorflow, batch %d: host operators %+v, want one of %.6g s that syncs", batch, host, p2)
		}
		if len(host) == 1 && math.Abs(float64(host[0].HostWork)/(float64(batch)*all)-1) > 1e-9 {
			t.Errorf("tensorflow, batch %d: host work %v, want %.6g s", batch, host[0].HostWork, float64(batch)*all)
		}
		for _, o := range torch {
			if o.HostCPU != 0 {
				t.Errorf("pytorch, batch %d: %s on the host", batch, o.Name)
			}
		}
		if len(tf) >= len(torch) {
			t.Errorf("batch %d: %d tensorflow operators, want fewer than pytorch's %d", batch, len(tf), len(torch))
		}
	}
	if nmsHost(819) != units.Seconds(819)*nmsPush+units.Seconds(819*818/2)*nmsIoU {
		t.Error("nmsHost: fewer boxes than kept: want k = n")
	}
}
