package loader

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// A huge action value (a model's 5 MB "text") is refused up front as an
// invalid action, not sent to the plugin: the plugin stays up and the
// next action works.
func TestPluginHugeActionValueIsRefused(t *testing.T) {
	dir := externalDir(t, map[string]string{"tb": "browser"})
	opts, _ := testOptions(t, dir)
	ctx := context.Background()
	b, err := OpenBrowser(ctx, "tb", BrowserOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, "http://x.test/"); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", 5<<20)
	err = b.Act(ctx, engine.Action{Kind: engine.ActFill, Ref: "e1", Value: huge})
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeInvalid || !strings.Contains(ae.Message, "the value of fill is 5242880 bytes") {
		t.Fatalf("err = %#v", err)
	}
	err = b.Navigate(ctx, "http://x.test/?q="+huge)
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeInvalid || !strings.Contains(ae.Message, "the URL is") {
		t.Fatalf("err = %#v", err)
	}
	if err := b.Act(ctx, engine.Action{Kind: engine.ActClick, Ref: "e1"}); err != nil {
		t.Fatalf("the plugin after a refused action: %v", err)
	}
}
