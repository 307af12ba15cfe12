package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/archive"
)

func init() {
	register([]string{"export"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.exportCommand()} })
	register([]string{"import"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.importCommand()} })
}

func (a *App) exportCommand() *cobra.Command {
	var out, format string
	c := &cobra.Command{
		Use:   "export [--format engine|memory-json|agent-memory] [--out FILE|DIR]",
		Short: "Write all memory (every store) as one versioned JSON document, or in a seed tool's format",
		Long: `Write all memory as one JSON document: {"format": "engine-export",
"version": 1, "lessons": [...], "facts": [...], "selectors": [...],
"trajectories": [...], "sessions": [...], "runs": [...], "plans": [...]}.
engine import reads it back. With --out the file is written whole or not
at all.

--format memory-json writes the lessons as the two-tier design's
memory.json ({"version": 1, "lessons": [...]}, the ten fields of a lesson;
source "seed" or "learned"). --format agent-memory --out DIR writes
browser-agent-driver's .agent-memory layout: domains/<host>/knowledge.json
(facts and sessions), selectors.json, trajectories/<id>.json, and
agent-runs/<run id>.json. engine import reads both back. What a format
cannot hold (docs/design/archive.md) is left out and counted on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			switch format {
			case "engine", archive.FormatMemoryJSON:
				if err := checkOutFile(out); err != nil {
					return err
				}
			case archive.FormatAgentMemory:
				if out == "" || out == "-" {
					return Usagef("--format agent-memory writes a directory: give it with --out DIR")
				}
				if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
					return Usagef("--out %s is a file: --format agent-memory writes a directory", out)
				}
			default:
				return Usagef("--format %q: want engine, memory-json or agent-memory", format)
			}
			return a.withMemory(ctx, func(m *MemoryClient) error {
				doc, err := m.Export(ctx)
				if err != nil {
					return err
				}
				switch format {
				case archive.FormatMemoryJSON:
					return a.exportMemoryJSON(doc, out)
				case archive.FormatAgentMemory:
					now, err := a.Now()
					if err != nil {
						return err
					}
					w, err := archive.WriteAgentMemory(out, doc, now())
					if err != nil {
						return err
					}
					fmt.Fprintf(a.Stderr, "engine: exported %s, %s, %s, %s, %s to %s (%s)\n",
						Plural(len(doc.Facts), "fact", "facts"), Plural(len(doc.Selectors), "selector", "selectors"),
						Plural(len(doc.Trajectories), "trajectory", "trajectories"), Plural(len(doc.Sessions), "session", "sessions"),
						Plural(len(doc.Runs), "run", "runs"), out, Plural(w.Files, "file", "files"))
					for _, l := range w.Left {
						fmt.Fprintf(a.Stderr, "engine: left out %s\n", l)
					}
					return nil
				}
				if out == "" || out == "-" {
					return PrintJSON(a.Stdout, doc)
				}
				if err := writeFileAtomic(out, doc); err != nil {
					return err
				}
				fmt.Fprintf(a.Stderr, "engine: exported %s to %s\n", doc.Count(), out)
				return nil
			})
		},
	}
	c.Flags().StringVar(&out, "out", "", "write to `FILE` (or DIR for agent-memory) instead of standard output")
	c.Flags().StringVar(&format, "format", "engine", "engine (the whole memory), memory-json (lessons, two-tier) or agent-memory (browser-agent-driver's directory)")
	return c
}

// exportMemoryJSON writes doc's lessons as a two-tier memory.json to out
// (standard output for "" or "-").
func (a *App) exportMemoryJSON(doc *archive.Document, out string) error {
	var b bytes.Buffer
	left, err := archive.WriteMemoryJSON(&b, doc)
	if err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err = a.Stdout.Write(b.Bytes())
	} else {
		err = archive.WriteFileAtomic(out, b.Bytes())
	}
	if err != nil {
		return err
	}
	if out != "" && out != "-" {
		fmt.Fprintf(a.Stderr, "engine: exported %s to %s\n", Plural(len(doc.Lessons)-left, "lesson", "lessons"), out)
	}
	if left > 0 {
		fmt.Fprintf(a.Stderr, "engine: left out %s (memory.json cannot hold a lesson back from the prompt)\n", Plural(left, "quarantined lesson", "quarantined lessons"))
	}
	if n := len(doc.Facts) + len(doc.Selectors) + len(doc.Trajectories) + len(doc.Sessions) + len(doc.Runs) + len(doc.Plans); n > 0 {
		fmt.Fprintf(a.Stderr, "engine: left out %s (memory.json holds lessons only)\n", Plural(n, "record that is not a lesson", "records that are not lessons"))
	}
	return nil
}

// checkOutFile refuses, before any export work, an --out file that cannot
// be written where it is asked for: a directory, or one in a directory
// that does not exist ("" and "-" are standard output).
func checkOutFile(out string) error {
	if out == "" || out == "-" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return Usagef("--out %s is a directory: this format writes one file (--format agent-memory writes a directory)", out)
	}
	dir := filepath.Dir(out)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Usagef("--out %s: the directory %s does not exist", out, dir)
	}
	return nil
}

// writeFileAtomic writes v as indented JSON to a temporary file beside
// path and renames it into place.
func writeFileAtomic(path string, v any) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err = enc.Encode(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func (a *App) importCommand() *cobra.Command {
	var asJSON, trust bool
	c := &cobra.Command{
		Use:   "import FILE|DIR [--trust]",
		Short: "Read memory from an export, a two-tier memory.json or a browser-agent-driver .agent-memory directory",
		Long: `Read memory into the data dir, merging with what is there (records with
the same identity are replaced). FILE is an engine export or a two-tier
memory.json ({"version": 1, "lessons": [...]}); DIR is a
browser-agent-driver .agent-memory directory (or a directory holding one):
domains/*/knowledge.json, selectors.json, trajectories/*.json and
agent-runs/*.json.

Every file is parsed and every record checked before anything is written:
a malformed or half-written file, or an invalid record, is reported with
the file (and the line or record) and nothing is imported (exit status 2).

Imported lessons are candidates (source imported): recalled in Tier 2 and
shown as unverified advice until seen working again or approved (engine
lessons approve ID); only the engine's own seeds, word for word, stay
seeds. With --trust each lesson keeps the trust, source and provenance the
file gives it (a lesson without a trust field, as in a memory.json, is
trusted): an export read back with --trust is the memory it came from.
Either way a lesson whose text fails the screen is quarantined.`,
		Args: exactArgs(1, "FILE or DIR"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				// The file is read here and parsed by the importer; a directory
				// is read and checked here and sent as an export document. Both
				// go by their name in messages, as when read in one step.
				// A large file is sent as it is read, with its digest: the
				// importer takes it record by record (memory bounded by a chunk).
				var res *archive.Result
				var notes []string
				if fi, serr := os.Stat(args[0]); serr == nil && fi.Mode().IsRegular() && fi.Size() > api.StreamImport && fi.Size() <= engine.MaxInputFile {
					res, err = a.importStream(cmd, m, args[0], fi.Size(), trust)
				} else {
					var body []byte
					if body, notes, err = archive.ReadInput(args[0]); err != nil {
						return err
					}
					res, err = m.Import(ctx, body, args[0], trust)
				}
				if err != nil {
					return err
				}
				res.Skipped = append(notes, res.Skipped...)
				if asJSON {
					return PrintJSON(a.Stdout, res)
				}
				fmt.Fprintf(a.Stdout, "imported %s\n", res.Imported)
				for _, s := range res.Skipped {
					fmt.Fprintf(a.Stdout, "left out: %s\n", s)
				}
				if res.SHA256 != "" {
					fmt.Fprintf(a.Stderr, "engine: engine revert --import %s undoes this import\n", res.SHA256)
				}
				return nil
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print what was imported as JSON")
	c.Flags().BoolVar(&trust, "trust", false, "keep the lessons' trust as the file gives it (default: every lesson a candidate)")
	return c
}

// importStream sends the file at path (size bytes) to the importer as it
// is read, after reading it once for its SHA-256; on a terminal, stderr
// shows a bar of the bytes sent.
func (a *App) importStream(cmd *cobra.Command, m *MemoryClient, path string, size int64, trust bool) (*archive.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, engine.MarkInvalid(fmt.Errorf("%s: %w", path, err))
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var body io.Reader = f
	if IsTerminal(a.Stderr) {
		body = &progressReader{r: f, w: a.Stderr, what: filepath.Base(path), total: size, shown: -1}
	}
	return m.ImportFrom(cmd.Context(), body, size, hex.EncodeToString(h.Sum(nil)), path, trust)
}
