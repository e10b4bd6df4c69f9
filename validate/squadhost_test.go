package validate

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// squadHostRow is a row of testdata/squad-step-host.csv
// (scripts/squadstep.py): run_squad.py's step on CPU tensors.
type squadHostRow struct {
	layers, batch, alive, gen2   int
	gcMS, loaderMS, fwdMS, bwdMS float64
}

// readSquadHost reads the table and the header's tracked objects and full
// collection time.
func readSquadHost(t *testing.T) (rows []squadHostRow, tracked int, fullS float64) {
	t.Helper()
	b, err := os.ReadFile("testdata/squad-step-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`# (\d+) tracked objects held .*; a full collection ([0-9.]+) s`).FindSubmatch(b)
	if m == nil {
		t.Fatal("squad-step-host.csv: no tracked objects and full collection in the header")
	}
	tracked, _ = strconv.Atoi(string(m[1]))
	fullS, _ = strconv.ParseFloat(string(m[2]), 64)
	r := csv.NewReader(strings.NewReader(string(b)))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		v := make([]float64, len(rec))
		for i, f := range rec {
			if v[i], err = strconv.ParseFloat(f, 64); err != nil {
				t.Fatalf("squad-step-host.csv: %v", err)
			}
		}
		rows = append(rows, squadHostRow{layers: int(v[0]), batch: int(v[1]), alive: int(v[3]),
			gen2: int(v[6]), gcMS: v[7], loaderMS: v[8], fwdMS: v[9], bwdMS: v[10]})
	}
	return rows, tracked, fullS
}

// loaderAt interpolates the loader's time a step linearly through the
// table's batches (the longest where a batch has several rows).
func loaderAt(rows []squadHostRow, b int) float64 {
	at := map[int]float64{}
	for _, r := range rows {
		at[r.batch] = max(at[r.batch], r.loaderMS)
	}
	bs := make([]int, 0, len(at))
	for k := range at {
		bs = append(bs, k)
	}
	slices.Sort(bs)
	i := slices.IndexFunc(bs, func(x int) bool { return x >= b })
	if i < 0 {
		i = len(bs) - 1 // beyond the largest: the last segment's line
	}
	i = max(i, 1)
	lo, hi := bs[i-1], bs[i]
	return at[lo] + (at[hi]-at[lo])*float64(b-lo)/float64(hi-lo)
}

// squadSteps returns each SQuAD row's measured step in seconds (the
// per-device batch over the per-device rate) by batch, from the two
// published files.
func squadSteps(t *testing.T) (steps []float64, batches []int) {
	t.Helper()
	for _, name := range []string{"published-lambda-bert.csv", "published-dle-bert-large.csv"} {
		f, err := os.Open("../testdata/measurements/" + name)
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(f)
		r.Comment = '#'
		recs, err := r.ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		for _, rec := range recs[1:] {
			if !strings.HasSuffix(rec[col["model"]], "-squad") {
				continue
			}
			b, _ := strconv.Atoi(rec[col["batch"]])
			n, _ := strconv.Atoi(rec[col["devices"]])
			sps, _ := strconv.ParseFloat(rec[col["samples_per_s"]], 64)
			steps, batches = append(steps, float64(b*n)/sps), append(batches, b)
		}
	}
	if len(steps) == 0 {
		t.Fatal("no SQuAD rows")
	}
	return steps, batches
}

// TestSQuADHostTable checks what docs/validation-transformer.md ("What the
// fixed time is not, measured") says of scripts/squadstep.py's table: no
// full collection in any row, and each figure it quotes, computed from the
// table and, for the loader's share, from every SQuAD row of the
// published files.
func TestSQuADHostTable(t *testing.T) {
	rows, tracked, fullS := readSquadHost(t)
	alive := map[int]int{}
	gcLo, gcHi := math.Inf(1), 0.0
	fwd, bwd := map[int][2]float64{}, map[int][2]float64{}
	span := func(m map[int][2]float64, k int, v float64) {
		s, ok := m[k]
		if !ok {
			s = [2]float64{v, v}
		}
		m[k] = [2]float64{min(s[0], v), max(s[1], v)}
	}
	for _, r := range rows {
		if r.gen2 != 0 {
			t.Errorf("%d layers at %d: %d full collections, the page says none", r.layers, r.batch, r.gen2)
		}
		alive[r.layers] = r.alive
		gcLo, gcHi = min(gcLo, r.gcMS), max(gcHi, r.gcMS)
		span(fwd, r.layers, r.fwdMS)
		span(bwd, r.layers, r.bwdMS)
	}
	bLo, bHi := slices.MinFunc(rows, func(a, b squadHostRow) int { return a.batch - b.batch }).batch,
		slices.MaxFunc(rows, func(a, b squadHostRow) int { return a.batch - b.batch }).batch
	steps, batches := squadSteps(t)
	share := 0.0
	for i, s := range steps {
		share = max(share, loaderAt(rows, batches[i])/1e3/s)
	}
	r := func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
	rng := func(s [2]float64) string {
		if r(s[0]) == r(s[1]) {
			return r(s[0])
		}
		return r(s[0]) + " to " + r(s[1])
	}
	doc, err := os.ReadFile("../docs/validation-transformer.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{
		fmt.Sprintf("A full collection over the %s tracked objects takes %.2f s", thousands(tracked), fullS),
		fmt.Sprintf("about %s here", thousands(int(math.Round(float64(tracked)/4/1e4)*1e4))),
		fmt.Sprintf("keeps %d tracked objects alive after BERT-large's forward pass (%d for BERT-base)", alive[24], alive[12]),
		fmt.Sprintf("take %.2f to %.2f ms a step", gcLo, gcHi),
		fmt.Sprintf("%.1f ms a step at %d sequences to %.1f ms at %d, at most %.1f %% of a measured step",
			loaderAt(rows, bLo), bLo, loaderAt(rows, bHi), bHi, 100*share),
		fmt.Sprintf("| not listed: %.1f to %.0f ms a step at %d to %d sequences, at most %.1f %% of these steps",
			loaderAt(rows, bLo), loaderAt(rows, bHi), bLo, bHi, 100*share),
		fmt.Sprintf("%s ms forward and %s ms backward for BERT-large (%s and %s for BERT-base)",
			rng(fwd[24]), rng(bwd[24]), rng(fwd[12]), rng(bwd[12])),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/validation-transformer.md lacks %q", want)
		}
	}
}

// thousands writes n with commas between its groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
