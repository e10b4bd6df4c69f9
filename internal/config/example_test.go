package config_test

import (
	"fmt"

	"scaleplan/internal/config"
)

// Suggest names the command a mistyped or shortened word means, and
// none for a word near no command; a word a few letters off no name may
// still abbreviate one.
func ExampleSuggest() {
	commands := []string{"catalog", "simulate", "predict", "plan", "bench"}
	for _, word := range []string{"simualte", "pred", "sim", "xyzzy"} {
		fmt.Printf("%s: %q\n", word, config.Suggest(word, commands))
	}
	fmt.Printf("thruput: %q\n", config.Suggest("thruput", []string{"throughput", "steps", "train"}))
	// Output:
	// simualte: "simulate"
	// pred: "predict"
	// sim: "simulate"
	// xyzzy: ""
	// thruput: "throughput"
}
