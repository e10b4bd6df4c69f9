package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/mlperfepochs"
)

// source is one results repository checked out (or extracted) at dir.
type source struct {
	Round  string // "v3.1"
	Dir    string // the repository's root on disk
	Repo   string // "mlcommons/training_results_v3.1"
	Commit string // the commit dir holds
}

// parseSource reads ROUND=DIR@COMMIT.
func parseSource(s string) (source, error) {
	round, rest, ok := strings.Cut(s, "=")
	dir, commit, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 || !regexp.MustCompile(`^v\d+\.\d+$`).MatchString(round) || dir == "" || commit == "" {
		return source{}, fmt.Errorf("source %q: want ROUND=DIR@COMMIT, such as v3.1=/tmp/training_results_v3.1@d06288b", s)
	}
	return source{Round: round, Dir: dir, Repo: "mlcommons/training_results_" + round, Commit: commit}, nil
}

// Submission is one row of a benchmark's table: the runs of one system of
// one submitter in one round at one global batch and optimizer.
type Submission struct {
	Round, Submitter, System string
	// Division is "closed" (the reference model, and hyperparameters
	// within the rules' bounds) or "open"; "" if neither the logs nor the
	// system file say.
	Division           string
	Accelerators       int // number_of_nodes × accelerators_per_node; 0 if the system file is missing
	GlobalBatch        float64
	Optimizer          string
	Unit               string
	Runs, Reached      int       // result logs read, runs that stopped with status success
	ToTarget           []float64 // per reached run
	Repo, Commit, Path string    // the results directory
}

// Mean, Std, Min and Max summarise ToTarget; Std is the sample standard
// deviation (0 for one run).
func (s *Submission) Mean() float64 {
	var t float64
	for _, v := range s.ToTarget {
		t += v
	}
	return t / float64(len(s.ToTarget))
}

// Std is the sample standard deviation of ToTarget, 0 for one run.
func (s *Submission) Std() float64 {
	n := len(s.ToTarget)
	if n < 2 {
		return 0
	}
	m, ss := s.Mean(), 0.0
	for _, v := range s.ToTarget {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(n-1))
}

var resultName = regexp.MustCompile(`^result_\d+\.txt$`)

// extract reads every submission of benchmark b in src: the files
// SUBMITTER/results/SYSTEM/DIR/result_N.txt (v0.6 on; v0.5 nests them a
// level deeper and logs in another format, not read here).
func extract(src source, b benchmark) ([]*Submission, error) {
	if b.Rounds != nil && !b.Rounds(src.Round) {
		return nil, nil
	}
	subs, err := filepath.Glob(filepath.Join(src.Dir, "*", "results", "*"))
	if err != nil {
		return nil, err
	}
	slices.Sort(subs)
	var out []*Submission
	for _, sysDir := range subs {
		for _, d := range b.Dir {
			got, err := extractDir(src, b, filepath.Join(sysDir, d))
			if err != nil {
				return out, err
			}
			out = append(out, got...)
		}
	}
	return out, nil
}

// extractDir reads the result logs of one system's benchmark directory,
// one Submission per global batch and optimizer found there.
func extractDir(src source, b benchmark, dir string) ([]*Submission, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	rel, _ := filepath.Rel(src.Dir, dir)
	rel = filepath.ToSlash(rel)
	parts := strings.Split(rel, "/") // SUBMITTER results SYSTEM BENCH
	byKey := map[string]*Submission{}
	var keys []string
	for _, e := range ents {
		if !resultName.MatchString(e.Name()) {
			continue
		}
		r, err := readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", rel, e.Name(), err)
		}
		if r.GlobalBatch < 1 {
			continue // no batch: nothing to place on the curve
		}
		opt := optimizerOf(r, b)
		k := fmt.Sprintf("%g\x00%s", r.GlobalBatch, opt)
		s := byKey[k]
		if s == nil {
			acc, div := system(filepath.Join(src.Dir, parts[0], "systems", parts[2]+".json"))
			if r.Division != "" {
				div = r.Division
			}
			s = &Submission{Round: src.Round, Submitter: parts[0], System: parts[2], Division: div, Accelerators: acc,
				GlobalBatch: r.GlobalBatch, Optimizer: opt, Unit: b.Unit, Repo: src.Repo, Commit: src.Commit, Path: rel}
			byKey[k] = s
			keys = append(keys, k)
		}
		s.Runs++
		if v := toTarget(r, b); r.Status == "success" && v > 0 {
			s.Reached++
			s.ToTarget = append(s.ToTarget, v)
		}
	}
	var out []*Submission
	for _, k := range keys {
		if byKey[k].Reached > 0 {
			out = append(out, byKey[k])
		}
	}
	return out, nil
}

func readFile(p string) (runLog, error) {
	f, err := os.Open(p)
	if err != nil {
		return runLog{}, err
	}
	defer f.Close()
	return readRun(f)
}

// system reads number_of_nodes × accelerators_per_node and the division
// from a system description file; 0 and "" for what it does not say.
func system(p string) (accelerators int, div string) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, ""
	}
	var sys map[string]json.RawMessage
	if json.Unmarshal(data, &sys) != nil {
		return 0, ""
	}
	div = division(text(sys["division"]))
	n, ok1 := number(sys["number_of_nodes"])
	a, ok2 := number(sys["accelerators_per_node"])
	if !ok1 || !ok2 || n < 1 || a < 1 {
		return 0, div
	}
	return int(math.Round(n * a)), div
}

// writeCSV writes subs as a benchmark's table.
func writeCSV(w io.Writer, subs []*Submission) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(mlperfepochs.Header); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, s := range subs {
		lo, hi := slices.Min(s.ToTarget), slices.Max(s.ToTarget)
		rec := []string{s.Round, s.Submitter, s.System, s.Division, strconv.Itoa(s.Accelerators), g(s.GlobalBatch), s.Optimizer,
			s.Unit, strconv.Itoa(s.Runs), strconv.Itoa(s.Reached), g(s.Mean()), g(s.Std()), g(lo), g(hi),
			s.Repo, s.Commit, path.Clean(s.Path)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
