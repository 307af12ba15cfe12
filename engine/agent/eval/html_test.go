package eval

import (
	"context"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// hostileReport is the report of an evaluation whose case names and goals
// are markup, with changed variants, written to its output dir.
func hostileReport(t *testing.T) (*Report, Config) {
	t.Helper()
	m := &memoryRun{}
	cfg := testConfig(t, m)
	cfg.Cases[0].Name = `<img src=x onerror=alert(1)>`
	cfg.Cases[0].Goal = `</title><script>alert("goal")</script>`
	cfg.Cases[1].Goal = `"><svg onload=alert(2)>`
	for i := range cfg.Cases {
		cfg.Cases[i].ChangedURL = "http://127.0.0.1:2/"
	}
	cfg.ChangeAfter = 1
	cfg.Run = func(ctx context.Context, r Run) (Outcome, error) {
		o, err := m.run(ctx, r)
		if r.Case.Name == "checkout" && r.Arm == NoMemory && r.Repeat == 2 {
			o.Status, o.Success, o.Reason = "failed", false, `<b>gave up</b>`
		}
		return o, err
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(cfg.Out); err != nil {
		t.Fatal(err)
	}
	return rep, cfg
}

// report.html renders in headless chromium with no console error, no
// request but the page itself, the scripted note as its first line, a
// chart per metric with a bar per arm, and the cases' markup as text.
func TestReportHTMLInChromium(t *testing.T) {
	path := os.Getenv("ENGINE_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Skipf("no chromium at %s (set ENGINE_CHROMIUM)", path)
	}
	rep, cfg := hostileReport(t)
	page := "file://" + filepath.Join(cfg.Out, "report.html")

	profile, err := os.MkdirTemp("", "eval-html-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.UserDataDir(profile),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute) // bounds a hung browser
	defer cancelT()

	var (
		mu       sync.Mutex
		problems []string
		requests []string
	)
	note := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	msgs := chromedp.Console(ctx)
	sent := chromedp.Events(ctx, network.RequestWillBeSent)
	failed := chromedp.Events(ctx, network.LoadingFailed)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.Type == "assert" {
				note("console: " + m.String())
			}
		}
	}()
	go func() {
		for ev, err := range sent {
			if err != nil {
				return
			}
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range failed {
			if err != nil {
				return
			}
			note("failed request: " + ev.ErrorText)
		}
	}()

	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#cases"))); err != nil {
		t.Fatal(err)
	}
	type facts struct {
		FirstLine string   `json:"firstLine"`
		Charts    int      `json:"charts"`
		Bars      []int    `json:"bars"`
		CaseRows  int      `json:"caseRows"`
		CmpRows   int      `json:"cmpRows"`
		Name      string   `json:"name"`
		Goal      string   `json:"goal"`
		Bad       int      `json:"bad"`
		Title     string   `json:"title"`
		Arms      []string `json:"arms"`
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[facts](`({
		firstLine: document.body.innerText.split("\n")[0],
		charts: document.querySelectorAll("figure svg").length,
		bars: [...document.querySelectorAll("figure svg")].map(s => s.querySelectorAll("rect.bar").length),
		caseRows: document.querySelectorAll("#cases tbody tr").length,
		cmpRows: document.querySelectorAll("#comparisons tbody tr").length,
		name: document.querySelector("#cases strong").textContent,
		goal: document.querySelector("#cases .goal").textContent,
		bad: document.querySelectorAll("script, img, iframe, link, #cases svg").length,
		title: document.title,
		arms: [...document.querySelector("figure svg").querySelectorAll("text[text-anchor=end]")].map(t => t.textContent),
	})`))
	if err != nil {
		t.Fatal(err)
	}
	// A round trip after the load lets the load's events come in first.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
	for _, u := range requests {
		if u != page {
			t.Errorf("the page requested %s: it must need nothing but itself", u)
		}
	}
	if f.FirstLine != ScriptedNote {
		t.Errorf("first line %q, want the scripted note", f.FirstLine)
	}
	arms := len(rep.Arms) // no-memory, no-memory@changed, cold, warm@changed, replay@changed
	if f.Charts != len(Metrics) || len(f.Bars) != len(Metrics) || f.Bars[0] != arms || strings.Join(f.Arms, " ") != "no-memory no-memory@changed cold warm@changed replay@changed" {
		t.Errorf("charts: %d, bars %v, arms %v", f.Charts, f.Bars, f.Arms)
	}
	if f.CaseRows != len(cfg.Cases)*arms || f.CmpRows != len(rep.Comparisons)*len(Metrics) {
		t.Errorf("%d case rows, %d comparison rows", f.CaseRows, f.CmpRows)
	}
	if f.Name != cfg.Cases[0].Name || f.Goal != cfg.Cases[0].Goal || f.Bad != 0 || f.Title != "engine eval report" {
		t.Errorf("markup from the cases was not kept as text: %+v", f)
	}
}

// junit.xml parses with encoding/xml and has a test case per case and
// reported arm (changed variants included), named by case, classed by arm.
func TestJUnitPerCaseAndArm(t *testing.T) {
	rep, cfg := hostileReport(t)
	b, err := os.ReadFile(filepath.Join(cfg.Out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string    `xml:"name,attr"`
				Classname string    `xml:"classname,attr"`
				Failure   *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			key := c.Classname + "/" + c.Name
			if seen[key] || c.Classname != "eval."+s.Name {
				t.Errorf("test case %s twice, or in suite %s", key, s.Name)
			}
			seen[key] = true
		}
	}
	for _, a := range rep.Arms {
		for _, cs := range cfg.Cases {
			if !seen["eval."+string(a.Name)+"/"+cs.Name] {
				t.Errorf("no test case for %s in %s", cs.Name, a.Name)
			}
		}
	}
	if doc.Tests != len(rep.Arms)*len(cfg.Cases) || len(seen) != doc.Tests || doc.Failures != 2 { // no-memory and no-memory@changed of checkout
		t.Errorf("tests %d, failures %d, want %d and 2", doc.Tests, doc.Failures, len(rep.Arms)*len(cfg.Cases))
	}
	if !strings.Contains(string(b), "&lt;b&gt;gave up&lt;/b&gt;") {
		t.Error("the failure's reason is not escaped")
	}
	if _, err := os.Stat(filepath.Join(cfg.Out, "report.html")); errors.Is(err, os.ErrNotExist) {
		t.Error("no report.html")
	}
}

// The report of an evaluation stopped before some arms ran renders too:
// an arm without runs has no bar and no interval, its numbers a dash.
func TestReportHTMLPartial(t *testing.T) {
	m := &memoryRun{fail: 3} // the first warm run cannot be made
	cfg := testConfig(t, m)
	rep, err := Eval(context.Background(), cfg)
	if err == nil {
		t.Fatal("no error from the run that could not be made")
	}
	var b strings.Builder
	if err := rep.HTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<text x="150" dx="-8" y="77" text-anchor="end">warm</text>`,
		`<rect class="bar" x="150" y="64" width="0" height="18"><title>warm: – </title></rect>`,
		`<td>warm</td><td>no-memory</td><td class="num">0</td><td>success</td><td class="num">–</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "NaN") {
		t.Error("the page shows NaN")
	}
}
