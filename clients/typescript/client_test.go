// Package typescript_test builds the TypeScript client and runs its node
// test suite against a real engine serve (the engine binary built from this
// module, over its unix socket and its TCP listener with the token) and,
// for the Playwright integration, the demo shop served by this process.
package typescript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/clients/internal/servetest"
	"github.com/engine-dev/engine/engine/agent/demosite"
	"github.com/engine-dev/engine/engine/api"
)

// generate is package.json's generate script: the types are the OpenAPI
// document (printed by internal/openapidoc) through openapi-typescript
// with its default options, which TestTypeScriptClient's schema check
// runs too.
const generate = "go run ./internal/openapidoc | openapi-typescript -o src/schema.d.ts"

// node finds node and npm; without them the test is skipped, except in CI
// (CI=true), where the client's suite must run (scripts/install-deps.sh
// test installs them).
func node(t *testing.T) (nodeBin, npm string) {
	t.Helper()
	var missing []string
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		missing = append(missing, "npm")
	}
	if len(missing) > 0 {
		msg := strings.Join(missing, " and ") + " not on PATH: scripts/install-deps.sh test installs them"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return nodeBin, npm
}

// run runs a command in this directory and fails the test with its output
// when it fails.
func run(t *testing.T, ctx context.Context, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// TestTypeScriptClient installs the package's locked devDependencies (npm
// ci), checks that src/schema.d.ts is what openapi-typescript makes of the
// current OpenAPI document, compiles the package with tsc, and runs node
// --test over the compiled tests with a server, the demo shop and the
// system chromium (ENGINE_CHROMIUM, else /usr/bin/chromium) to reach.
func TestTypeScriptClient(t *testing.T) {
	nodeBin, npm := node(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run(t, ctx, nil, npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")

	t.Run("schema", func(t *testing.T) {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		b, err := os.ReadFile("package.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			t.Fatalf("package.json: %v", err)
		}
		if got := pkg.Scripts["generate"]; got != generate {
			t.Fatalf("package.json's generate script is %q; this test checks the output of %q", got, generate)
		}
		doc, err := json.Marshal(api.OpenAPI())
		if err != nil {
			t.Fatal(err)
		}
		gen := exec.CommandContext(ctx, nodeBin, "node_modules/openapi-typescript/bin/cli.js")
		gen.Stdin = bytes.NewReader(doc)
		var stderr bytes.Buffer
		gen.Stderr = &stderr
		want, err := gen.Output()
		if err != nil {
			t.Fatalf("openapi-typescript: %v\n%s", err, stderr.String())
		}
		have, err := os.ReadFile("src/schema.d.ts")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Fatalf("src/schema.d.ts is not the current OpenAPI document's types: run `npm run generate` in clients/typescript")
		}
	})
	if t.Failed() {
		return
	}

	run(t, ctx, nil, npm, "run", "--silent", "build")
	// tsc emits no declaration file for a declaration file: the build
	// copies the generated types beside the compiled ones, which import them.
	if _, err := os.Stat("dist/src/schema.d.ts"); err != nil {
		t.Fatalf("the build left the generated types out of dist/src: %v", err)
	}
	srv := servetest.Start(t, servetest.Options{})
	shop, err := demosite.Start(demosite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shop.Close()
	chromium := os.Getenv("ENGINE_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	tests, err := filepath.Glob("dist/test/*.test.js")
	if err != nil || len(tests) == 0 {
		t.Fatalf("tsc compiled no tests into dist/test (%v)", err)
	}
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{"--test", "--test-reporter=spec"}, tests...)...)
	cmd.Env = append(append(os.Environ(), srv.Env...), "ENGINE_TEST_SHOP="+shop.URL, "ENGINE_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the TypeScript client's tests failed: %v", err)
	}

	// The README's TypeScript example (the README test checks that its
	// block is this file) runs as a reader would run it, with the server's
	// address and token in ENGINE_SERVER and ENGINE_TOKEN.
	t.Run("readme", func(t *testing.T) {
		out := run(t, ctx, []string{"ENGINE_SERVER=" + srv.URL, "ENGINE_TOKEN=" + srv.Token}, nodeBin, "dist/examples/readme.js")
		for _, want := range []string{"recorded l", "refused: invalid lesson: unknown category \"tips\""} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("examples/readme.ts printed no %q:\n%s", want, out)
			}
		}
	})
}
