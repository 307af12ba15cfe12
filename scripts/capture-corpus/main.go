// Command capture-corpus collects the texts real runs wrote to memory, for
// the injection screen's corpus (engine/trust/injection/testdata): the
// browser's and the engine's error messages of each step, the lessons the
// runs learned, the facts they observed and the selectors they recorded.
// Each is written as a labelled corpus line ("real", with a source such as
// "captured:gym"), once, sorted, with the loopback ports the runs served
// on made one (a text differs by its port only).
//
// It reads every runs/<id>/actions.jsonl and runs/<id>/memory_events.jsonl
// under the directories given, so it takes an engine eval --out directory
// or an engine demo --data-dir alike:
//
//	make build
//	bin/engine eval --suite gym --llm scripted --browser chromedp --repeats 1 --warm-runs 1 --out /tmp/gymcap
//	bin/engine demo --data-dir /tmp/democap --quiet
//	go run ./scripts/capture-corpus -source captured:gym /tmp/gymcap > /tmp/gym.jsonl
//	go run ./scripts/capture-corpus -source captured:demo /tmp/democap > /tmp/demo.jsonl
//
// Then merge what is new into engine/trust/injection/testdata/captured.jsonl
// (-merge FILE prints FILE's lines and the captured ones it lacks), read
// the texts, and relabel as "injection" any a page put there on purpose:
// the runs' sites are the engine's own, but a future trap site may not be.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// entry is one corpus line (engine/trust/injection/corpus_test.go's
// corpusEntry).
type entry struct {
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Domain string `json:"domain"`
	Text   string `json:"text"`
	Source string `json:"source,omitempty"`
}

func main() {
	source := flag.String("source", "captured:run", "the source each captured line names")
	merge := flag.String("merge", "", "a corpus `FILE` to print first; captured texts it already holds are left out")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: capture-corpus [-source NAME] [-merge FILE] DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	err := run(out, *source, *merge, flag.Args())
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capture-corpus:", err)
		os.Exit(1)
	}
}

// run writes the corpus lines of merge's file and of the runs under dirs
// to out.
func run(out io.Writer, source, merge string, dirs []string) error {
	seen := map[string]bool{}
	key := func(e entry) string { return e.Kind + "\x00" + e.Text }
	if merge != "" {
		old, err := os.ReadFile(merge)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
			if line == "" {
				continue
			}
			var e entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				return fmt.Errorf("%s:%d: %v", merge, i+1, err)
			}
			seen[key(e)] = true
			fmt.Fprintln(out, line)
		}
	}
	var found []entry
	add := func(kind, domain, text string) {
		text = strings.TrimSpace(ports.ReplaceAllString(text, "${1}:8080"))
		e := entry{Label: "real", Kind: kind, Domain: domain, Text: text, Source: source}
		if text == "" || seen[key(e)] {
			return
		}
		seen[key(e)] = true
		found = append(found, e)
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if filepath.Base(filepath.Dir(filepath.Dir(path))) != "runs" {
				return nil
			}
			switch d.Name() {
			case "actions.jsonl":
				return eachLine(path, func(m map[string]any) {
					msg, _ := m["error"].(string)
					switch m["origin"] {
					case "browser":
						add("chromium_error", "", msg)
					case "engine":
						add("engine_error", "", msg)
					}
				})
			case "memory_events.jsonl":
				return eachLine(path, func(m map[string]any) {
					domain, _ := m["domain"].(string)
					str := func(k string) string { s, _ := m[k].(string); return s }
					switch m["event"] {
					case "lesson_recorded", "lesson_deduplicated":
						add("lesson", domain, str("lesson"))
					case "fact_observed", "fact_quarantined":
						add("fact", domain, str("key"))
						add("fact", domain, str("value"))
					case "selector_recorded":
						add("selector", domain, str("name"))
						add("selector", domain, str("selector"))
					}
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].Kind != found[j].Kind {
			return found[i].Kind < found[j].Kind
		}
		return found[i].Text < found[j].Text
	})
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, e := range found {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// ports finds a loopback address's port: each run serves its site on a
// new one.
var ports = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`)

func eachLine(path string, f func(map[string]any)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
		f(m)
	}
	return sc.Err()
}
