package hw

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"scaleplan/internal/config"
)

// catalogYAML writes a catalogue of n GPUs with a node and a system each.
// With same, every device has the one name "x" (and no nodes or systems
// are written), a catalogue whose keys all repeat.
func catalogYAML(n int, same bool) []byte {
	var b bytes.Buffer
	b.WriteString("devices:\n")
	for i := range n {
		name := fmt.Sprintf("gpu-%d", i)
		if same {
			name = "x"
		}
		fmt.Fprintf(&b, "  %s:\n    model: GPU %d\n    vendor: Acme\n    kind: gpu\n"+
			"    peak: {fp32: 15 TFLOP/s}\n    memory: 16 GiB\n    memory_bandwidth: 900 GB/s\n"+
			"    host_link: {gen: 3, lanes: 16}\n", name, i)
	}
	if same {
		return b.Bytes()
	}
	b.WriteString("nodes:\n")
	for i := range n {
		fmt.Fprintf(&b, "  node-%d:\n    model: Node %d\n    device: gpu-%d\n    devices: 4\n"+
			"    cpu: {model: Xeon, sockets: 2, cores_per_socket: 14, clock: 2.4 GHz}\n"+
			"    host_memory: 256 GiB\n    link: {kind: nvlink, bandwidth: 50 GB/s}\n", i, i, i)
	}
	b.WriteString("systems:\n")
	for i := range n {
		fmt.Fprintf(&b, "  sys-%d:\n    node: node-%d\n    max_nodes: 1\n    transports: {nccl: {efficiency: 0.8}}\n", i, i)
	}
	return b.Bytes()
}

// TestParseRepeatedDevices gives 8,000 devices of one name: refused, each
// repeat with its line and the line of the first, the first MaxListed
// listed and the rest counted. Duplicate keys were found by comparing every
// key with every other (9 s and 812 MB at 8,000); the check is now linear.
func TestParseRepeatedDevices(t *testing.T) {
	const n = 8000
	_, err := Parse(bytes.NewReader(catalogYAML(n, true)))
	if err == nil {
		t.Fatal("Parse accepted 8,000 devices of one name")
	}
	lines := strings.Split(err.Error(), "\n")
	if want := fmt.Sprintf("%d problems:", n-1); lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	// Each device takes 8 lines; the second starts at line 10.
	if want := `  line 10: devices: mapping key "x" already defined at line 2`; len(lines) < 2 || lines[1] != want {
		t.Errorf("second line %q, want %q", lines[1], want)
	}
	if want := fmt.Sprintf("  and %d more", n-1-config.MaxListed); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
}

// TestParseManyDevices checks that a large valid catalogue parses whole.
func TestParseManyDevices(t *testing.T) {
	const n = 2000
	c, err := Parse(bytes.NewReader(catalogYAML(n, false)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Devices) != n || len(c.Nodes) != n || len(c.Systems) != n {
		t.Fatalf("%d devices, %d nodes, %d systems; want %d each", len(c.Devices), len(c.Nodes), len(c.Systems), n)
	}
	if _, _, d, err := c.Resolve("sys-1234"); err != nil || d.Name != "gpu-1234" {
		t.Errorf("Resolve(sys-1234) = %v, %v", d, err)
	}
}

// BenchmarkParseCatalog parses catalogues of 1,000 and 8,000 devices (each
// with a node and a system), and of 1,000 and 8,000 devices of one name.
func BenchmarkParseCatalog(b *testing.B) {
	for _, same := range []bool{false, true} {
		for _, n := range []int{1000, 8000} {
			data := catalogYAML(n, same)
			name := fmt.Sprintf("entries=%d", n)
			if same {
				name = fmt.Sprintf("repeated=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					_, err := Parse(bytes.NewReader(data))
					if (err != nil) != same {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
