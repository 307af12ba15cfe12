package gym

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
	"sync"
)

//go:embed sites/bank
var bankFiles embed.FS

// The bank's one customer. The PIN is never in a goal: the scripted model
// holds it, as a model is given credentials apart from the task, and
// types it into the PIN field, a password field whose value the run
// redacts wherever it would write it.
const (
	bankCustomer = "48210377"
	bankPIN      = "730519"
)

// bankAccount is one of the customer's accounts.
type bankAccount struct {
	Slug, Name, Last4, Balance string
}

var bankAccounts = []bankAccount{
	{"everyday", "Everyday account", "1042", "€2,318.40"},
	{"savings", "Savings", "4821", "€12,480.55"},
	{"holiday", "Holiday fund", "7730", "€1,905.00"},
	{"joint", "Joint account", "5518", "€764.12"},
	{"business", "Business account", "9903", "€31,077.89"},
}

// bankPage is what a bank page is rendered from: ID gives every element an
// id that is new on every load.
type bankPage struct {
	ids           map[string]string
	Wrong         bool
	CustomerLabel string
	SignIn        string
	Accounts      []bankAccount
	Account       bankAccount
}

// ID is the element's id on this load: its name and random hex.
func (p *bankPage) ID(name string) string {
	if id, ok := p.ids[name]; ok {
		return id
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := "el-" + hex.EncodeToString(b)
	p.ids[name] = id
	return id
}

// The bank: a login whose PIN field is read-only until it is focused (fill
// fails: "element is read-only"), and element ids that change on every
// load. Its changed variant calls the customer field "Customer number" and
// the button "Log in", and lists the accounts in another order.
func init() {
	register(Site{
		Name:    "bank",
		About:   "an online bank: a login with a PIN (password) field that is read-only until focused, and element ids that change on every load",
		Handler: bankHandler,
		Tasks: []Task{
			bankTask("savings", bankAccounts[1]),
			bankTask("everyday", bankAccounts[0]),
			bankTask("holiday-fund", bankAccounts[2]),
			bankTask("joint", bankAccounts[3]),
			bankTask("business", bankAccounts[4]),
		},
	})
}

func bankTask(name string, a bankAccount) Task {
	return Task{
		Name: "bank." + name,
		Goal: "sign in to the bank as customer " + bankCustomer + " (your PIN is in your credentials) and tell the balance of the " +
			strings.TrimSuffix(a.Name, " account") + " account", // "Joint account": not "Joint account account"
		Traps:    []string{TrapLogin, TrapDynamicIDs},
		MaxSteps: 12,
		Rules:    bankRules(a),
	}
}

// bankRules act like a model on the bank. Cold, it fills the customer ID
// and then the PIN, which is read-only until focused: it clicks the field
// and fills it again. Shown a reference trajectory, it clicks the PIN field
// before filling it. On the changed variant the field and the button it
// was shown are gone: it uses the ones the page has.
func bankRules(a bankAccount) []byte {
	b := &rulebook{}
	b.on("done", "Balance: ", "", rbFinish("The balance of "+a.Name+" is "+a.Balance))
	b.on("open", "Title: Your accounts", "", rbClick(a.Name))
	b.on("focus-pin", rbFailed("element is read-only"), "", rbClick("PIN"))
	b.on("customer-number", rbFailed(`no element named "Customer ID"`), "textbox - Customer number", rbFill("Customer number", bankCustomer))
	b.on("log-in", rbFailed(`no element named "Sign in"`), "button - Log in", rbClick("Log in"))
	b.on("pin", rbOK(`click "PIN"`), "", rbFill("PIN", bankPIN))
	b.on("sign-in", `into "PIN" → ok`, "", rbClick("Sign in"))
	// The customer field's label differs on the changed variant; the rule
	// reads the last action's line, not memory's flow facts that quote it.
	filledCustomer := `Last action: fill "` + bankCustomer + `" into "Customer `
	b.on("warm-pin", filledCustomer, rbReference, rbClick("PIN"))
	b.on("fill-pin", filledCustomer, "", rbFill("PIN", bankPIN))
	b.on("start", "Last action: (none)", "", rbFill("Customer ID", bankCustomer))
	return b.JSON()
}

// bankHandler serves the bank, or its changed variant.
func bankHandler(changed bool) http.Handler {
	tpl := template.Must(template.ParseFS(bankFiles, "sites/bank/*.html"))
	accounts := bankAccounts
	label, signIn := "Customer ID", "Sign in"
	if changed {
		accounts = []bankAccount{bankAccounts[4], bankAccounts[2], bankAccounts[0], bankAccounts[3], bankAccounts[1]}
		label, signIn = "Customer number", "Log in"
	}
	var mu sync.Mutex
	sessions := map[string]bool{}
	signedIn := func(r *http.Request) bool {
		c, err := r.Cookie("nwb_session")
		mu.Lock()
		defer mu.Unlock()
		return err == nil && sessions[c.Value]
	}
	page := func(w http.ResponseWriter, name string, p *bankPage) {
		p.ids, p.CustomerLabel, p.SignIn, p.Accounts = map[string]string{}, label, signIn, accounts
		w.Header().Set("Cache-Control", "no-store")
		_ = tpl.ExecuteTemplate(w, name, p)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "login.html", &bankPage{})
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("customer") != bankCustomer || r.FormValue("pin") != bankPIN {
			w.WriteHeader(http.StatusUnauthorized)
			page(w, "login.html", &bankPage{Wrong: true})
			return
		}
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		tok := hex.EncodeToString(b)
		mu.Lock()
		sessions[tok] = true
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "nwb_session", Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, "/accounts", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /accounts", func(w http.ResponseWriter, r *http.Request) {
		if !signedIn(r) {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		page(w, "accounts.html", &bankPage{})
	})
	mux.HandleFunc("GET /accounts/{slug}", func(w http.ResponseWriter, r *http.Request) {
		if !signedIn(r) {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		for _, a := range accounts {
			if a.Slug == r.PathValue("slug") {
				page(w, "account.html", &bankPage{Account: a})
				return
			}
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		b, _ := bankFiles.ReadFile("sites/bank/style.css")
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write(b)
	})
	return mux
}
