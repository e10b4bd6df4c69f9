package tables_test

import (
	"os"

	"scaleplan/internal/tables"
)

// A table with a unit in a header and a declared quantity, in json and
// text.
func Example() {
	t := &tables.Table{
		Header: []string{"devices", "step (ms)", "time to train"},
		Rows:   [][]string{{"4", tables.Num(167.2), "56.5 min"}, {"32", "-", "—"}},
	}
	for _, f := range []string{"json", "text"} {
		if err := t.Write(os.Stdout, f); err != nil {
			panic(err)
		}
	}
	// Output:
	// [
	//   {
	//     "devices": 4,
	//     "step_s": 0.1672,
	//     "time_to_train_s": 3390
	//   },
	//   {
	//     "devices": 32,
	//     "step_s": null,
	//     "time_to_train_s": null
	//   }
	// ]
	// devices  step (ms)  time to train
	// 4        167.2      56.5 min
	// 32       -          —
}
