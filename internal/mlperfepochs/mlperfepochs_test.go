package mlperfepochs

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// The embedded tables are this directory's csv files, one per benchmark
// that scripts/mlperfepochs extracts, and an unknown name is an error
// that lists them.
func TestTables(t *testing.T) {
	want := []string{"bert", "maskrcnn", "resnet", "retinanet", "ssd"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		disk, err := os.ReadFile(name + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		emb, err := fs.ReadFile(FS(), name+".csv")
		if err != nil || string(emb) != string(disk) || !strings.HasPrefix(string(emb), "round,") {
			t.Errorf("%s: embedded table differs from the file or lacks the header (%v)", name, err)
		}
	}
	if _, err := Read("gnmt"); err == nil || !strings.Contains(err.Error(), "retinanet") {
		t.Errorf("Read(gnmt): %v, want an error listing the tables", err)
	}
	if _, err := Read("resnet.csv"); err == nil {
		t.Error("Read(resnet.csv): no error, want names without .csv")
	}
}
