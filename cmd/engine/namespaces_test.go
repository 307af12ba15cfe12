package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/mcp/mcptest"
)

// `engine serve --namespace a` holds the whole store: a request without
// Engine-Namespace lands in a, two clients naming different namespaces
// each see only their own, and a CLI command with --namespace goes through
// the server to its namespace.
func TestServeNamespaces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	createNamespaces(t, dir, "a", "b")
	startServe(t, dir, "--namespace", "a")
	c := dialClient(t, ctx, dir)
	if _, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "Lesson of a, sent without a namespace.", Category: lesson.BestPractice}); err != nil {
		t.Fatal(err)
	}
	b := c.WithNamespace("b")
	if _, err := b.RecordLesson(ctx, lesson.Lesson{Lesson: "Lesson of b.", Category: lesson.BestPractice}); err != nil {
		t.Fatal(err)
	}
	texts := func(ns string) string {
		t.Helper()
		var out []string
		page, err := c.WithNamespace(ns).Lessons(ctx, api.LessonFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page.Lessons {
			out = append(out, l.Lesson)
		}
		return strings.Join(out, "|")
	}
	if got := texts("a"); !strings.Contains(got, "Lesson of a") || strings.Contains(got, "Lesson of b") {
		t.Errorf("namespace a: %s", got)
	}
	if got := texts("b"); !strings.Contains(got, "Lesson of b") || strings.Contains(got, "Lesson of a") {
		t.Errorf("namespace b: %s", got)
	}
	if got := texts("-"); strings.Contains(got, "Lesson of") {
		t.Errorf("the default namespace: %s", got)
	}
	for ns, want := range map[string]string{"b": "Lesson of b", "a": "Lesson of a"} {
		cmd := engineCmd(t, dir, "--namespace", ns, "query", "lessons")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) || strings.Count(string(out), "Lesson of") != 1 {
			t.Errorf("engine --namespace %s query lessons through the server: %v\n%s", ns, err, out)
		}
	}
	cmd := engineCmd(t, dir, "namespaces", "list")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\na ") || !strings.Contains(string(out), "\nb ") {
		t.Errorf("engine namespaces list through the server: %v\n%s", err, out)
	}
}

// `engine mcp --namespace a`: the MCP tools read and write namespace a,
// and a CLI command naming another namespace through the socket it serves
// stays apart.
func TestMCPNamespace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	createNamespaces(t, dir, "a", "b")
	cmd := engineCmd(t, dir, "--namespace", "a", "mcp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: hang}, nil)
	if err != nil {
		t.Fatalf("engine mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	for ns, id := range map[string]string{"a": "run_a", "-": "run_default", "b": "run_b"} {
		create := engineCmd(t, dir, "--namespace", ns, "runs", "create", "--id", id, "--goal", "buy a racket", "--url", "https://shop.example/")
		if out, err := create.CombinedOutput(); err != nil {
			t.Fatalf("engine --namespace %s runs create: %v\n%s", ns, err, out)
		}
	}
	text, _ := mcptest.OK(t, ctx, cs, "memory_query", map[string]any{"kind": "runs"}, "run_a running")
	if strings.Contains(text, "run_default") || strings.Contains(text, "run_b") {
		t.Errorf("MCP in namespace a lists another namespace's runs: %s", text)
	}
}

// createNamespaces makes namespaces in dir's store (engine namespaces
// create): naming one never made is an error.
func createNamespaces(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, ns := range names {
		if out, err := engineCmd(t, dir, "namespaces", "create", ns).CombinedOutput(); err != nil {
			t.Fatalf("engine namespaces create %s: %v\n%s", ns, err, out)
		}
	}
}
