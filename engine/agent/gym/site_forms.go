package gym

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
)

// The forms site: a support page with a contact form inside a shadow root
// (its topic picker a custom combobox, where select fails: it must be
// clicked open and an option clicked), and a feedback page with a survey
// in an iframe served from another site (localhost, not 127.0.0.1), which
// a browser runs out of process: its fields are not in the page's
// snapshot, and the way in is the survey's own page, linked above the
// frame. The two are on pages of their own: clicks next to a frame of
// another site just loaded are sometimes delivered into it.

//go:embed sites/forms
var formsFiles embed.FS

// formsNames are what the changed variant renames.
type formsNames struct{ Topic, Message, Send, Open, Comment string }

var (
	formsOriginal = formsNames{Topic: "Topic", Message: "Message", Send: "Send message",
		Open: "Open the survey on its own page", Comment: "Comment"}
	formsChanged = formsNames{Topic: "Subject", Message: "Details", Send: "Send to support",
		Open: "Take the survey in full", Comment: "Your remarks"}
)

var (
	formsTopics  = []string{"Billing", "Shipping", "Returns", "Something else"}
	formsRatings = []string{"Poor", "Fair", "Good", "Excellent"}
)

func init() {
	register(Site{
		Name:    "forms",
		About:   "A support page with a contact form in a shadow root (a custom combobox where select fails) and a feedback survey in a cross-site iframe whose fields the snapshot does not show.",
		Handler: formsHandler,
		Tasks: []Task{
			formsContactTask("billing", "Billing", "My last invoice charged me twice"),
			formsContactTask("shipping", "Shipping", "My parcel has not arrived after ten days"),
			formsContactTask("returns", "Returns", "I would like to return a jacket"),
			formsSurveyTask("survey-good", "Good", "quick and clear answer"),
			formsSurveyTask("survey-excellent", "Excellent", "solved on the first reply"),
		},
	})
}

func formsContactTask(name, topic, message string) Task {
	return Task{
		Name:     "forms." + name,
		Goal:     fmt.Sprintf("Send Northwind support the message %q under the topic %s", message, topic),
		Traps:    []string{TrapShadowDOM},
		MaxSteps: 10,
		Rules:    formsContactRules(topic, message),
	}
}

func formsSurveyTask(name, rating, comment string) Task {
	return Task{
		Name:     "forms." + name,
		Goal:     fmt.Sprintf("Rate Northwind support %s in its feedback survey, with the comment %q", rating, comment),
		Path:     "/feedback",
		Traps:    []string{TrapIframe},
		MaxSteps: 12,
		Rules:    formsSurveyRules(rating, comment),
	}
}

// formsContactRules: cold, the agent selects the topic (the picker is not
// a select), clicks it open and the option, writes the message and sends.
// Shown a reference trajectory, it clicks the picker open first.
func formsContactRules(topic, message string) []byte {
	o, c := formsOriginal, formsChanged
	p := &playbook{}
	p.on("done", "Message sent under "+topic, "", pbFinish("Sent the message under "+topic))
	for _, n := range []formsNames{o, c} {
		p.on("open-"+n.Topic, pbFailed("element is not a select"), pbEl("combobox", n.Topic), pbClick(n.Topic))
		p.on("option-"+n.Topic, pbOK(fmt.Sprintf("click %q", n.Topic)), "", pbClick(topic))
		p.on("write-"+n.Message, pbOK(fmt.Sprintf("click %q", topic)), pbEl("textbox", n.Message), pbFill(n.Message, message))
		p.on("send-"+n.Send, "Last action: fill ", pbEl("button", n.Send), pbClick(n.Send))
	}
	p.once("memory-open", pbNone, pbStep("click", "combobox", o.Topic), pbClick(o.Topic))
	for _, n := range []formsNames{o, c} {
		p.on("select-"+n.Topic, pbEl("combobox", n.Topic), "", pbSelect(n.Topic, topic))
	}
	return p.JSON()
}

// formsSurveyRules: cold, the agent fills the survey's comment on the
// support page (the frame's fields are not there), follows the link to
// the survey's own page, rates, comments and sends. Shown a reference
// trajectory, it follows the link first.
func formsSurveyRules(rating, comment string) []byte {
	o, c := formsOriginal, formsChanged
	p := &playbook{}
	p.on("done", fmt.Sprintf("You rated us %s: “%s”", rating, comment), "", pbFinish("Rated the support "+rating))
	p.on("again", "Title: Thanks for your feedback", "", pbClick("Back to the survey"))
	for _, n := range []formsNames{o, c} {
		p.on("own-page-"+n.Open, pbFailed(pbNotFound(o.Comment)), pbEl("link", n.Open), pbClick(n.Open))
		p.on("comment-"+n.Comment, pbOK(fmt.Sprintf("select %q into %q", rating, "Rating")), pbEl("textbox", n.Comment), pbFill(n.Comment, comment))
	}
	p.on("send", "Last action: fill ", pbEl("button", "Send feedback"), pbClick("Send feedback"))
	p.on("rate", "Title: Feedback survey", "", pbSelect("Rating", rating))
	p.once("memory-own-page", pbNone, pbStep("click", "link", o.Open), pbClick(o.Open))
	p.on("fill-here", "Title: How did we do?", "", pbFill(o.Comment, comment))
	return p.JSON()
}

func formsHandler(changed bool) http.Handler {
	n := formsOriginal
	if changed {
		n = formsChanged
	}
	tpl := template.Must(template.ParseFS(formsFiles, "sites/forms/*.html"))
	render := func(w http.ResponseWriter, name string, d map[string]any) {
		d["N"] = n
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = tpl.ExecuteTemplate(w, name, d)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, "home.html", map[string]any{"Topics": formsTopics})
	})
	mux.HandleFunc("GET /feedback", func(w http.ResponseWriter, r *http.Request) {
		// The survey comes from another site: the same server by another
		// name, which a browser isolates in a process of its own.
		survey := "http://" + strings.Replace(r.Host, "127.0.0.1", "localhost", 1) + "/survey"
		render(w, "feedback.html", map[string]any{"SurveyURL": survey})
	})
	mux.HandleFunc("GET /survey", func(w http.ResponseWriter, r *http.Request) {
		render(w, "survey.html", map[string]any{"Ratings": formsRatings})
	})
	mux.HandleFunc("GET /survey/thanks", func(w http.ResponseWriter, r *http.Request) {
		render(w, "thanks.html", map[string]any{"Rating": r.FormValue("rating"), "Comment": r.FormValue("comment")})
	})
	return mux
}
