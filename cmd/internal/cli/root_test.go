package cli

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestCommandSetNames holds each set's declared names to the commands it
// builds (names and aliases), and no name to two sets: rootCommand builds
// only the set a command line names, so a wrong name would hide a command.
func TestCommandSetNames(t *testing.T) {
	seen := map[string]bool{}
	for _, set := range commandSets {
		var built []string
		for _, c := range set.make(&App{}) {
			built = append(built, c.Name())
			built = append(built, c.Aliases...)
		}
		slices.Sort(built)
		declared := slices.Sorted(slices.Values(set.names))
		if !slices.Equal(built, declared) {
			t.Errorf("a set declares %v but builds %v", declared, built)
		}
		for _, n := range declared {
			if seen[n] {
				t.Errorf("two sets declare %q", n)
			}
			seen[n] = true
		}
	}
}

// TestNamedBuildsOneSet: a command line that names a declared command
// builds its set alone; anything else builds every command.
func TestNamedBuildsOneSet(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" when every command is built
	}{
		{[]string{"recall", "error", "--command", "click"}, "recall"},
		{[]string{"--data-dir", "/tmp/x", "lessons", "show", "1"}, "lessons"},
		{[]string{"--data-dir=/tmp/x", "--namespace", "ns", "version"}, "version"},
		{[]string{"--data-dir", "version"}, ""}, // version is the flag's value; no command
		{[]string{}, ""},
		{[]string{"help", "recall"}, ""},
		{[]string{"-h", "recall"}, ""},
		{[]string{"--bogus", "recall"}, ""},
		{[]string{"lesons"}, ""}, // a typo: cobra suggests from every command
		{[]string{"run", "--task", "x"}, ""},
		{[]string{"__complete", "rec"}, ""},
	} {
		a := &App{args: tc.args, Stdout: io.Discard, Stderr: io.Discard}
		root := a.rootCommand(nil)
		var names []string
		for _, c := range root.Commands() {
			agent := false
			for _, ac := range AgentCommands {
				agent = agent || ac.Name == c.Name()
			}
			if !agent && c.Name() != "help" && c.Name() != "completion" {
				names = append(names, c.Name())
			}
		}
		if tc.want != "" {
			var set []string
			for _, s := range commandSets {
				if slices.Contains(s.names, tc.want) {
					set = s.names
				}
			}
			if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(set))) {
				t.Errorf("%q built %v, want the set %v", tc.args, names, set)
			}
			continue
		}
		var all int
		for _, s := range commandSets {
			all += len(s.names)
		}
		if len(names) != all {
			t.Errorf("%q built %d commands, want all %d: %v", tc.args, len(names), all, names)
		}
	}
}

// TestHelpListsEveryCommand: the root's help, and a named command's, are
// what they were with the whole tree built.
func TestHelpListsEveryCommand(t *testing.T) {
	var out bytes.Buffer
	if code := Main([]string{"--help"}, strings.NewReader(""), &out, io.Discard); code != 0 {
		t.Fatalf("engine --help: exit %d", code)
	}
	for _, s := range commandSets {
		for _, n := range s.names {
			if !strings.Contains(out.String(), "\n  "+n+" ") {
				t.Errorf("engine --help does not list %s:\n%s", n, out.String())
			}
		}
	}
	out.Reset()
	if code := Main([]string{"recall", "--help"}, strings.NewReader(""), &out, io.Discard); code != 0 {
		t.Fatalf("engine recall --help: exit %d", code)
	}
	if !strings.Contains(out.String(), "Usage:\n  engine recall") || !strings.Contains(out.String(), "--data-dir") {
		t.Errorf("engine recall --help:\n%s", out.String())
	}
}
