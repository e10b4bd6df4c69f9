package model

import (
	"strings"
	"testing"
)

// TestTotals sums a hand-made list of operators.
func TestTotals(t *testing.T) {
	ops := []Op{
		{Name: "fc", Kind: MatMul, Pass: Forward, FLOPs: 2 * 4 * 3 * 5, Read: 100, Write: 20, Params: 15, Saved: 48, M: 4, N: 3, K: 5},
		{Name: "fc.grad", Kind: MatMul, Pass: Backward, FLOPs: 240, Read: 200, Write: 80},
		{Name: "relu", Kind: Elementwise, Pass: Forward, FLOPs: 12, Read: 48, Write: 48},
		{Name: "sgd", Kind: Update, Pass: UpdatePass, FLOPs: 30, Read: 120, Write: 60},
	}
	got := Totals(ops)
	if got.Params != 15 || got.Forward != 132 || got.Backward != 240 || got.Step != 30 || got.FLOPs != 402 {
		t.Errorf("totals %+v: want params 15, forward 132, backward 240, step 30, all 402", got)
	}
	if got.Bytes != 676 || got.Saved != 48 {
		t.Errorf("bytes %v, saved %v: want 676 and 48", got.Bytes, got.Saved)
	}
	if got.ByKind[MatMul] != 360 || got.ByKind[Elementwise] != 12 || got.ByKind[Update] != 30 {
		t.Errorf("by kind %v", got.ByKind)
	}
	if i := ops[0].Intensity(); i != 120.0/120 {
		t.Errorf("intensity %v: want 1", i)
	}
	if i := (&Op{FLOPs: 5}).Intensity(); i != 0 {
		t.Errorf("intensity without bytes %v: want 0", i)
	}
}

// TestOpsErrors checks the requests Ops refuses.
func TestOpsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Shape
		msg  string
	}{
		{"no-such-model", Shape{Batch: 1}, `no operator generator for model "no-such-model"`},
	} {
		_, err := Ops(c.name, c.s)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Ops(%q, %+v): %v; want %q", c.name, c.s, err, c.msg)
		}
	}
}
