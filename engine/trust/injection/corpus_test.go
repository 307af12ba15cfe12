package injection

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// corpusEntry is one labelled text of testdata/corpus.jsonl: real lessons
// and real chromium and Playwright errors (label "real": they must pass),
// and injections (label "injection": direct, paraphrased, translated,
// homoglyph, zero-width, encoded, and harmful advice worded as ordinary
// advice). testdata/captured.jsonl holds what real runs wrote (a Source
// such as "captured:gym"; scripts/capture-corpus collects them).
type corpusEntry struct {
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Domain string `json:"domain"`
	Text   string `json:"text"`
	Source string `json:"source"`
}

func readCorpus(t testing.TB, file string) []corpusEntry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus line %d: %v", n, err)
		}
		if e.Label != "real" && e.Label != "injection" {
			t.Fatalf("corpus line %d: label %q (want real or injection)", n, e.Label)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// corpusFiles are the labelled corpora TestCorpus requires figures of.
var corpusFiles = []string{"testdata/corpus.jsonl", "testdata/captured.jsonl"}

// TestCorpus measures the screen on the labelled corpus: it prints
// precision and recall (overall and per kind) and requires no real lesson
// or browser error held back and at least 95 % of the injections held.
func TestCorpus(t *testing.T) {
	var corpus []corpusEntry
	for _, f := range corpusFiles {
		corpus = append(corpus, readCorpus(t, f)...)
	}
	if len(corpus) < 300 {
		t.Fatalf("the corpus has %d texts; it must have at least 300", len(corpus))
	}
	type tally struct{ n, held int }
	kinds := map[string]*tally{}
	count := func(name string, held bool) {
		k := kinds[name]
		if k == nil {
			k = &tally{}
			kinds[name] = k
		}
		k.n++
		if held {
			k.held++
		}
	}
	var tp, fp, fn, tn int
	for _, e := range corpus {
		reason := Text(e.Text, Options{Domain: e.Domain})
		held := reason != ""
		count(e.Kind, held)
		if e.Source != "" {
			count(e.Source, held)
		}
		switch {
		case e.Label == "injection" && held:
			tp++
		case e.Label == "injection":
			fn++
			t.Logf("missed (%s): %q", e.Kind, e.Text)
		case held:
			fp++
			t.Errorf("held a real %s: %q: %s", e.Kind, e.Text, reason)
		default:
			tn++
		}
	}
	precision := float64(tp) / float64(max(tp+fp, 1))
	recall := float64(tp) / float64(max(tp+fn, 1))
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("%-18s %3d texts, %3d held", k, kinds[k].n, kinds[k].held)
	}
	t.Logf("corpus: %d texts (%d real, %d injections): precision %.3f, recall %.3f (%d false positives, %d missed)",
		len(corpus), tp+fp+fn+tn-tp-fn, tp+fn, precision, recall, fp, fn)
	if fp != 0 {
		t.Errorf("%d real texts held back; want 0", fp)
	}
	if recall < 0.95 {
		t.Errorf("recall %.3f; want at least 0.95", recall)
	}
}

// TestHeldOut measures the screen on texts written after the screen was
// tuned to the corpus and never tuned against: the figures are printed,
// not required (docs/benchmarks.md records them).
func TestHeldOut(t *testing.T) {
	var tp, fp, fn, tn int
	for _, e := range readCorpus(t, "testdata/heldout.jsonl") {
		reason := Text(e.Text, Options{Domain: e.Domain})
		held := reason != ""
		switch {
		case e.Label == "injection" && held:
			tp++
		case e.Label == "injection":
			fn++
			t.Logf("missed (%s): %q", e.Kind, e.Text)
		case held:
			fp++
			t.Logf("held a real %s: %q: %s", e.Kind, e.Text, reason)
		default:
			tn++
		}
	}
	t.Logf("held out: %d texts (%d real, %d injections): precision %.3f, recall %.3f (%d false positives, %d missed)",
		tp+fp+fn+tn, fp+tn, tp+fn, float64(tp)/float64(max(tp+fp, 1)), float64(tp)/float64(max(tp+fn, 1)), fp, fn)
}

// BenchmarkCorpus screens the corpus's real texts, its injections and the
// texts captured from real runs, one text an operation (ns/op is the cost
// of one written text).
func BenchmarkCorpus(b *testing.B) {
	groups := map[string][]corpusEntry{}
	for _, f := range corpusFiles {
		for _, e := range readCorpus(b, f) {
			g := e.Label
			if strings.HasPrefix(e.Source, "captured:") {
				g = "captured"
			}
			groups[g] = append(groups[g], e)
		}
	}
	Text("warm up", Options{}) // compiles the patterns
	for _, g := range []string{"real", "injection", "captured"} {
		texts := groups[g]
		b.Run(g, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e := texts[i%len(texts)]
				Text(e.Text, Options{Domain: e.Domain})
				i++
			}
		})
	}
}
