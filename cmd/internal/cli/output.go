package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintJSON writes v as indented JSON, the --json form of every read command.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Table writes aligned columns: the readable form of every read command.
type Table struct{ tw *tabwriter.Writer }

func NewTable(w io.Writer, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.Row(toAny(header)...)
	return t
}

// row adds one row; each cell is printed with %v, newlines flattened.
func (t *Table) Row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		s := fmt.Sprint(c)
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
		parts[i] = s
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *Table) Flush() error { return t.tw.Flush() }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Truncate shortens s to n runes for a Table cell.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// jsonArray streams a JSON array in PrintJSON's form, an item at a time,
// so a long list is printed as its pages arrive instead of held whole. A
// page (newJSONPage) is the array inside {"items": [...], "next_cursor"}.
type jsonArray struct {
	w     io.Writer
	n     int
	paged bool
}

func newJSONArray(w io.Writer) *jsonArray { return &jsonArray{w: w} }

// newJSONPage streams {"items": [...], "next_cursor": ...}: the form of a
// list asked for a page at a time (--max, --limit), so a program reads
// the cursor of the rest from the same output.
func newJSONPage(w io.Writer) *jsonArray { return &jsonArray{w: w, paged: true} }

// add writes one item.
func (a *jsonArray) add(v any) error {
	indent := "  "
	if a.paged {
		indent = "    "
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent(indent, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	sep := ",\n" + indent
	if a.n == 0 {
		sep = "[\n" + indent
		if a.paged {
			sep = "{\n  \"items\": " + sep
		}
	}
	a.n++
	_, err := io.WriteString(a.w, sep+strings.TrimSuffix(b.String(), "\n"))
	return err
}

// close ends the array (a page without a cursor: nothing remains).
func (a *jsonArray) close() error { return a.closePage("") }

// closePage ends the array, and a page with next as its cursor ("": null,
// nothing remains).
func (a *jsonArray) closePage(next string) error {
	end := "\n]\n"
	if a.paged {
		end = "\n  ]"
	}
	if a.n == 0 {
		end = "[]\n"
		if a.paged {
			end = "{\n  \"items\": []"
		}
	}
	if a.paged {
		cur := "null"
		if next != "" {
			b, _ := json.Marshal(next)
			cur = string(b)
		}
		end += ",\n  \"next_cursor\": " + cur + "\n}\n"
	}
	_, err := io.WriteString(a.w, end)
	return err
}

// Plural is "1 <one>" or "<n> <many>", for counts in human output (JSON
// output carries the bare number).
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
