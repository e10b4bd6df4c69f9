package cmd

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgElem matches an inline chart: its opening tag's attributes and its
// content.
var svgElem = regexp.MustCompile(`(?s)<svg ([^>]*)>(.*?)</svg>`)

// svgAttr returns the value of attribute name in an opening tag's
// attributes, "" if absent.
func svgAttr(attrs, name string) string {
	m := regexp.MustCompile(`(?:^|\s)` + name + `="([^"]*)"`).FindStringSubmatch(attrs)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// svgTexts returns the text of every <text> element in an SVG's content.
func svgTexts(content string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`).FindAllStringSubmatch(content, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// checkCharts checks that page holds the charts titled want, in order,
// each an inline <svg> with a positive width and height whose aria-label is
// its title and whose drawn text includes the title.
func checkCharts(t *testing.T, page string, want []string) {
	t.Helper()
	ms := svgElem.FindAllStringSubmatch(page, -1)
	if len(ms) != len(want) {
		t.Fatalf("%d <svg> elements, want %d (%q)", len(ms), len(want), want)
	}
	for i, m := range ms {
		w, _ := strconv.ParseFloat(svgAttr(m[1], "width"), 64)
		h, _ := strconv.ParseFloat(svgAttr(m[1], "height"), 64)
		if !(w > 0) || !(h > 0) {
			t.Errorf("chart %d: width %q, height %q: want positive sizes", i+1, svgAttr(m[1], "width"), svgAttr(m[1], "height"))
		}
		title := svgAttr(m[1], "aria-label")
		if !strings.HasPrefix(title, want[i]) {
			t.Errorf("chart %d is %q, want %q", i+1, title, want[i])
		}
		texts := svgTexts(m[2])
		found := false
		for _, tx := range texts {
			found = found || tx == title
		}
		if !found {
			t.Errorf("chart %d (%q): the title is not among its %d texts", i+1, title, len(texts))
		}
	}
}

// checkSelfContained checks that page loads nothing: no script, link,
// source attribute, style import, url() or web font, and no link that
// leaves the page.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<iframe", "<img", "<object", "<embed", " src=", "@import", "url(", "@font-face", "xlink:href"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link %q leaves the page", m[1])
		}
	}
}

// withoutSVG replaces the body of every inline chart by its title, for
// golden files that do not depend on how text is laid out.
func withoutSVG(page string) string {
	return svgElem.ReplaceAllStringFunc(page, func(s string) string {
		m := svgElem.FindStringSubmatch(s)
		return "<svg " + m[1] + ">…</svg>"
	})
}

// TestReport writes reports and checks exit code, stdout and stderr, the
// page (self-contained, its charts inline SVG with sizes and titles) and
// the page without the charts' drawing against
// testdata/report/NAME.golden (-update rewrites).
func TestReport(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		file   string   // the report written, under tmp
		charts []string // the charts' titles, in order
		msg    string   // in stderr
	}{
		{"verbs", []string{"report", "tsubame3-resnet50-caffe2-verbs", "-o", filepath.Join(tmp, "verbs", "report.html")}, exitOK, "verbs/report.html",
			[]string{"Step time breakdown: tsubame3-resnet50-caffe2-verbs", "Time to train vs device count: resnet50 on tsubame3",
				"Scaling efficiency vs device count: resnet50 on tsubame3", "One training step: tsubame3-resnet50-caffe2-verbs, 128 devices"}, ""},
		{"default-devices", []string{"report", "--devices", "32,128", "--out", filepath.Join(tmp, "default.html"), "tsubame3-resnet50-caffe2-default"}, exitOK, "default.html",
			[]string{"Step time breakdown", "Time to train", "Scaling efficiency", "One training step: tsubame3-resnet50-caffe2-default, 128 devices"}, ""},
		{"one-count", []string{"report", "seed003-resnet50-2gpu-nop2p", "--devices", "2", "--steps", "3", "-o", filepath.Join(tmp, "seed003.html")}, exitOK, "seed003.html",
			[]string{"Step time breakdown", "One training step: seed003-resnet50-2gpu-nop2p, 2 devices, batch 256"}, ""},
		{"pipeline", []string{"report", "ipu-pod16-efficientnet-b4", "-o", filepath.Join(tmp, "ipu.html")}, exitOK, "ipu.html",
			[]string{"Step time breakdown", "One training step: ipu-pod16-efficientnet-b4, 16 devices, batch 3"}, ""},
		{"reached", []string{"report", "zinrai-200h-transformer-mlperf-v0.7", "--steps", "2", "-o", filepath.Join(tmp, "transformer.html")}, exitOK, "transformer.html",
			[]string{"Step time breakdown", "One training step: zinrai-200h-transformer-mlperf-v0.7, 8 devices, batch 10240"}, ""},
		{"no-scenario", []string{"report"}, exitUsage, "", nil, "report takes one SCENARIO"},
		{"two-scenarios", []string{"report", "a", "b"}, exitUsage, "", nil, "report takes one SCENARIO"},
		{"unknown-scenario", []string{"report", "tsubame", "-o", filepath.Join(tmp, "x.html")}, exitRuntime, "", nil, `unknown scenario "tsubame"`},
		{"bad-devices", []string{"report", "tsubame3-resnet50-caffe2-verbs", "--devices", "4,x"}, exitUsage, "", nil, `--devices "4,x"`},
		{"bad-steps", []string{"report", "--steps", "0", "tsubame3-resnet50-caffe2-verbs"}, exitUsage, "", nil, "--steps 0"},
		{"bad-flag", []string{"report", "tsubame3-resnet50-caffe2-verbs", "--bogus"}, exitUsage, "", nil, "report: unknown flag --bogus\nrun 'scaleplan report --help' for its flags"},
		{"too-many-devices", []string{"report", "tsubame3-resnet50-caffe2-verbs", "--devices", "4096"}, exitRuntime, "", nil, "4096 devices need 1024 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.msg)
			}
			if tc.file == "" {
				return
			}
			path := filepath.Join(tmp, tc.file)
			if stdout != path+"\n" {
				t.Errorf("stdout %q, want the path %s", stdout, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			page := string(data)
			checkSelfContained(t, page)
			checkCharts(t, page, tc.charts)
			for _, want := range []string{"<h2>Predictions</h2>", "<h2>Where the step time goes</h2>", "<h2>Charts</h2>", "<h2>Inputs</h2>",
				`scope="rowgroup">System<`, `scope="rowgroup">Node<`, `scope="rowgroup">Device<`, `scope="rowgroup">Model<`,
				`scope="rowgroup">Recipe<`, `scope="rowgroup">Parallelism<`, `scope="rowgroup">Input pipeline<`} {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			checkGolden(t, filepath.Join("report", tc.name+".golden"), withoutSVG(page))
		})
	}
}

// TestReportDeterministic writes one report twice: the same bytes.
func TestReportDeterministic(t *testing.T) {
	dir := t.TempDir()
	var pages [2][]byte
	for i := range pages {
		path := filepath.Join(dir, fmt.Sprintf("r%d.html", i))
		if _, stderr, code := runCLI("report", "tsubame3-resnet50-caffe2-staged", "-o", path); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var err error
		if pages[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Error("two runs wrote different reports")
	}
}

// chromium returns the Chromium to render reports with: $CHROMIUM, else
// /usr/bin/chromium; "" when there is none.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// headless runs Chromium headless on url with extra flags and returns its
// stdout.
func headless(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,6000", "--hide-scrollbars"}, extra...)
	cmd := exec.Command(bin, append(args, url)...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", bin, strings.Join(extra, " "), err, errb.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %s: no answer in 90 s\n%s", bin, strings.Join(extra, " "), errb.String())
	}
	return out.Bytes()
}

// TestReportInBrowser renders a report in headless Chromium (CHROMIUM, or
// /usr/bin/chromium; skipped without one, as in CI) and checks what the
// browser made of it: the DOM after load holds every chart as an <svg>
// with a positive width and height and its title among its texts, and a
// 1200 × 6000 screenshot decodes, is not blank (its pixels vary), and
// shows the charts' colours (the blue and vermilion of plots.Palette,
// which the page's own styles do not use). REPORT_CHECK_DIR keeps the
// report, the DOM and the screenshot there (scripts/check-report.sh).
func TestReportInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install it (apt-get install -y chromium) or set CHROMIUM to run this check; CI does not")
	}
	dir := os.Getenv("REPORT_CHECK_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	scenario := os.Getenv("REPORT_CHECK_SCENARIO")
	if scenario == "" {
		scenario = "tsubame3-resnet50-caffe2-verbs"
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "report.html")
	if _, stderr, code := runCLI("report", scenario, "-o", path); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, m := range svgElem.FindAllStringSubmatch(string(src), -1) {
		titles = append(titles, svgAttr(m[1], "aria-label"))
	}
	if len(titles) == 0 {
		t.Fatal("the report has no chart")
	}
	url := "file://" + path

	// One run both dumps the DOM after load and takes the screenshot.
	shot := filepath.Join(dir, "screenshot.png")
	dom := headless(t, bin, url, "--dump-dom", "--screenshot="+shot)
	if err := os.WriteFile(filepath.Join(dir, "dom.html"), dom, 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dom, []byte("<h2>Predictions</h2>")) {
		t.Fatalf("the DOM Chromium dumped is not the report (%d bytes)", len(dom))
	}
	checkCharts(t, string(dom), titles)

	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", shot, err)
	}
	checkScreenshot(t, img, len(titles))
	t.Logf("%s: %d charts in the DOM; screenshot %s", path, len(titles), shot)
}

// checkScreenshot checks a screenshot of the report: it is not blank (the
// variance of its grey levels is well above zero) and the charts' blue
// (#0072B2) and vermilion (#D55E00) cover at least a few hundred pixels
// per chart.
func checkScreenshot(t *testing.T, img image.Image, charts int) {
	t.Helper()
	b := img.Bounds()
	if b.Dx() < 800 || b.Dy() < 600 {
		t.Fatalf("screenshot %d × %d pixels", b.Dx(), b.Dy())
	}
	var sum, sum2 float64
	var blue, vermilion int
	near := func(r, g, bl uint32, R, G, B uint32) bool {
		d := func(a, b uint32) uint32 {
			if a > b {
				return a - b
			}
			return b - a
		}
		return d(r, R) < 24 && d(g, G) < 24 && d(bl, B) < 24
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			v := (float64(r) + float64(g) + float64(bl)) / 3
			sum += v
			sum2 += v * v
			if near(r, g, bl, 0x00, 0x72, 0xB2) {
				blue++
			}
			if near(r, g, bl, 0xD5, 0x5E, 0x00) {
				vermilion++
			}
		}
	}
	n := float64(b.Dx() * b.Dy())
	mean := sum / n
	std := math.Sqrt(math.Max(sum2/n-mean*mean, 0))
	if std < 10 {
		t.Errorf("the screenshot is blank: grey level %.1f ± %.2f", mean, std)
	}
	if blue < 300*charts || vermilion < 30*charts {
		t.Errorf("the screenshot shows %d blue and %d vermilion pixels for %d charts: the charts did not render", blue, vermilion, charts)
	}
	t.Logf("screenshot %d × %d: grey %.1f ± %.1f; %d blue, %d vermilion pixels", b.Dx(), b.Dy(), mean, std, blue, vermilion)
}

// BenchmarkCharts times the commands that draw: simulate --plot (four
// charts as PNG and SVG), plot scaling of three scenarios, and report.
func BenchmarkCharts(b *testing.B) {
	dir := b.TempDir()
	for _, bc := range []struct {
		name string
		run  func() int
	}{
		{"simulate-plot/tsubame3-resnet50-caffe2-verbs", func() int {
			_, _, code := runSim("tsubame3-resnet50-caffe2-verbs", "--plot", dir)
			return code
		}},
		{"plot-scaling/tsubame3-caffe2-x3", func() int {
			_, _, code := runCLI(append([]string{"plot", "scaling", "-o", dir}, tsubame...)...)
			return code
		}},
		{"report/tsubame3-resnet50-caffe2-verbs", func() int {
			_, _, code := runCLI("report", "tsubame3-resnet50-caffe2-verbs", "-o", filepath.Join(dir, "r.html"))
			return code
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if code := bc.run(); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// TestReportExchange checks that the report names hierarchical's
// all-reduce between nodes as predict's header does.
func TestReportExchange(t *testing.T) {
	scen := editedScenario(t, "dgx-a100-resnet50-mlperf-v1.1", "  allreduce: nccl\n", "  allreduce: hierarchical\n  inter_node: double-tree\n")
	out := filepath.Join(t.TempDir(), "tree.html")
	if _, stderr, code := runCLI("report", "--devices", "16", "--steps", "2", "-o", out, scen); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "hierarchical, double-tree between nodes, buckets of"; !strings.Contains(string(page), want) {
		t.Errorf("the page lacks %q", want)
	}
}
