package gym

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// TestBankTraps checks the bank on both variants: element ids new on every
// load, a PIN field that is a read-only password field, the variant's
// names, a login that takes only the right PIN, accounts behind it, and no
// goal that holds the PIN.
func TestBankTraps(t *testing.T) {
	for _, task := range aTasks("bank") {
		if strings.Contains(task.Goal, bankPIN) {
			t.Errorf("%s: the goal holds the PIN", task.Name)
		}
	}
	for _, changed := range []bool{false, true} {
		srv := aSite(t, "bank", changed)
		label, button := "Customer ID", "Sign in"
		if changed {
			label, button = "Customer number", "Log in"
		}
		_, first := aGet(t, nil, srv.URL+"/")
		_, second := aGet(t, nil, srv.URL+"/")
		ids1, ids2 := aIDRE.FindAllStringSubmatch(first, -1), aIDRE.FindAllStringSubmatch(second, -1)
		if len(ids1) < 4 || len(ids1) != len(ids2) {
			t.Fatalf("changed %v: ids %v, %v", changed, ids1, ids2)
		}
		for i := range ids1 {
			if ids1[i][1] == ids2[i][1] {
				t.Errorf("changed %v: the id %s is the same on two loads", changed, ids1[i][1])
			}
		}
		if !strings.Contains(first, `type="password" autocomplete="off" readonly>`) || !strings.Contains(first, ">PIN</label>") ||
			!strings.Contains(first, ">"+label+"</label>") || !strings.Contains(first, ">"+button+"</button>") {
			t.Errorf("changed %v: the login form is not the variant's:\n%s", changed, first)
		}
		if resp, _ := aGet(t, nil, srv.URL+"/accounts"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Errorf("changed %v: accounts without signing in: %s", changed, resp.Status)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp, err := c.PostForm(srv.URL+"/login", url.Values{"customer": {bankCustomer}, "pin": {"000000"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("changed %v: a wrong PIN: %s", changed, resp.Status)
		}
		resp, err = c.PostForm(srv.URL+"/login", url.Values{"customer": {bankCustomer}, "pin": {bankPIN}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Request.URL.Path != "/accounts" {
			t.Fatalf("changed %v: signing in ends at %s: %s", changed, resp.Request.URL, resp.Status)
		}
		_, list := aGet(t, c, srv.URL+"/accounts")
		top := -1
		for i, a := range bankAccounts {
			at := strings.Index(list, ">"+a.Name+" ••"+a.Last4+"</a>")
			if at < 0 {
				t.Fatalf("changed %v: %s not listed", changed, a.Name)
			}
			if top < 0 || at < strings.Index(list, ">"+bankAccounts[top].Name+" ••") {
				top = i
			}
		}
		if want := map[bool]int{false: 0, true: 4}[changed]; top != want {
			t.Errorf("changed %v: %s is listed first, want %s", changed, bankAccounts[top].Name, bankAccounts[want].Name)
		}
		_, acct := aGet(t, c, srv.URL+"/accounts/savings")
		if !strings.Contains(acct, "Balance: €12,480.55") {
			t.Errorf("changed %v: the savings page:\n%s", changed, acct)
		}
		if strings.Contains(list, bankPIN) || strings.Contains(acct, bankPIN) {
			t.Errorf("changed %v: a page shows the PIN", changed)
		}
	}
}
