package eval_test

import (
	"fmt"

	"github.com/fanyi-go/translate/eval"
)

// Corpus scores of sacrebleu's README example, three hypotheses each with two references:
// sacrebleu prints BLEU = 48.53 and chrF2 = 59.73.
func Example() {
	hyps := []string{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."}
	refs := [][]string{
		{"The dog bit the man.", "The dog had bit the man."},
		{"It was not unexpected.", "No one was surprised."},
		{"The man bit him first.", "The man had bitten the dog."},
	}
	fmt.Printf("BLEU %.2f\n", eval.BLEU{}.Corpus(hyps, refs))
	fmt.Printf("chrF2 %.2f\n", eval.ChrF{}.Corpus(hyps, refs))
	// Output:
	// BLEU 48.53
	// chrF2 59.73
}

// Garble stands in for an engine that mangles words, in drills and tests.
func ExampleGarble() {
	fmt.Println(eval.Garble("The house is red."))
	// Output: ehT esuoh is der.
}
