// Package injection decides whether text that came from outside (an import, an
// action log's errors, a page, an API caller) may be shown to a model as
// browser advice. Memory is put into every prompt; a lesson that says
// "ignore all previous instructions", carries a link to another site, or
// hides characters a person cannot see would be obeyed, or followed, on
// every later run. Text that fails the screen is quarantined by the store
// that received it: kept, listed, never shown, until a person approves it.
//
// The screen looks for shapes: instructions aimed at the model, requests
// for data, advice against the user's interest, code, links to other sites,
// hidden characters, in the text as normalised and in its decoded and
// homoglyph-folded readings. Real lessons and the browser errors they quote
// ("<div class=\"backdrop\"> intercepts pointer events") pass;
// testdata/corpus.jsonl measures both kinds of error (corpus_test.go).
package injection

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine/trust/redact"

	"github.com/engine-dev/engine/engine/domain"
)

// MaxAdvice is the longest text that passes as advice, in characters. Real
// lessons are a sentence or two (the seeds are 60–170 characters); a page
// of text is not advice.
const MaxAdvice = 600

// Options say what the text is about.
type Options struct {
	// Domain is the host the text is bound to ("" for none): links and
	// addresses within its site are that site's own and pass.
	Domain string
}

// Text returns why text must not be shown to a model, or "" when it may.
//
// The text is normalised before matching (see normal): Unicode NFKC, the
// invisible characters stripped, lower-cased; homoglyphs are also folded
// to a Latin skeleton, and encoded payloads (HTML entities, %xx, \xNN and
// \uNNNN escapes, base64, ROT13, reversed or letter-spaced text) are
// decoded, and the instruction shapes are looked for in each reading.
func Text(text string, o Options) string {
	if n := utf8.RuneCountInString(text); n > MaxAdvice {
		return fmt.Sprintf("over-long: %d characters (advice is at most %d)", n, MaxAdvice)
	}
	for _, r := range text {
		if invisible(r) {
			return fmt.Sprintf("an invisible or control character (%U)", r)
		}
	}
	if w := mixedScript(text); w != "" {
		return fmt.Sprintf("a word mixing Latin with Cyrillic or Greek letters (%q)", w)
	}
	lower := normal(text)
	if strings.Contains(lower, "[") || strings.Contains(lower, "{{") {
		// What redaction left (engine/trust/redact's markers, and a
		// trajectory's secret slot) is the engine's own word, not the
		// text's: "Type [email] then the password" is no request to email
		// a password, and a flow's fill "{{secret}}" into "PIN" is no
		// template.
		lower = markers.Replace(lower)
	}
	lx := screen().lexicon
	plain := lx.scan(lower)
	for _, p := range patterns() {
		if !p.filter[asIs].mayMatch(plain) {
			continue
		}
		if m := p.re.FindString(lower); m != "" {
			return fmt.Sprintf("%s (%q)", p.what, strings.TrimSpace(m))
		}
	}
	rs := readings(text, lower)
	for i := range rs {
		v := &rs[i]
		// A ROT13 or reversed reading of an ASCII text holds a string
		// exactly where the text holds the string ROT13-encoded or
		// reversed: the one scan of the text has found them.
		in := plain
		if v.view == asIs {
			in = lx.scan(v.text)
		}
		for _, p := range patterns() {
			if !p.instruction || !p.filter[v.view].mayMatch(in) {
				continue
			}
			t := v.spelled(lower)
			if t == lower {
				break // ROT13 or reversal changed nothing: the text as is did not match
			}
			if m := p.re.FindString(t); m != "" {
				return fmt.Sprintf("%s, %s (%q)", p.what, v.how, strings.TrimSpace(m))
			}
		}
	}
	if host := foreignLink(text, lower, o.Domain); host != "" {
		return fmt.Sprintf("a link or address of another site (%s)", host)
	}
	return ""
}

// markers neutralises the redaction markers before matching.
var markers = strings.NewReplacer(redact.Email, "[x]", redact.Phone, "[x]", redact.Secret, "[x]", redact.SecretSlot, "[x]")

// invisible reports characters a person reading the text cannot see but a
// model reads: controls (newline and tab aside), zero-width and
// bidirectional formatting characters, Unicode tags.
func invisible(r rune) bool {
	switch {
	case r >= ' ' && r < 0x7f, r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r):
		return true
	case unicode.Is(unicode.Cf, r): // zero-width, bidi controls, tags, BOM
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

type pattern struct {
	what string
	// instruction marks a shape of words (not of markup or links): it is
	// also looked for in the decoded and folded readings of the text.
	instruction bool
	re          *regexp.Regexp
	// need is what a text must hold to match; filter is need compiled
	// over the patterns' lexicon, for a reading as is and for the ROT13
	// and reversed readings found in the text itself (see view): the
	// expression runs only on text it lets by.
	need   filter
	filter [views]compiled
}

// patterns are matched against the normalised text. Each names a shape
// of text aimed at the model rather than at the page, or advice that would
// harm the user however it is worded.
func patterns() []pattern { return screen().patterns }

// screen is the patterns and the lexicon of their filters.
var screen = sync.OnceValue(func() (s struct {
	patterns []pattern
	lexicon  *lexicon
}) {
	s.patterns = patternList()
	s.lexicon = &lexicon{}
	for i := range s.patterns {
		p := &s.patterns[i]
		for v := range views {
			if v == asIs || p.instruction {
				p.filter[v] = s.lexicon.compile(p.need, view(v))
			}
		}
	}
	return s
})

func patternList() []pattern {
	const (
		objects = `(instructions?|prompts?|rules|guidelines|guidance|directions|directives|context|commands|orders|constraints|policies|programming|training|messages|restrictions|safeguards|limits|advice|tasks?|goals?)`
		data    = `(passwords?|credentials?|card details|payment details|card info|bank details|login details|security questions?( and answers)?|api[ _-]?keys?|tokens?|secrets?|cookies?|session( id| token| cookie)?|system prompt|credit card( numbers?)?|card numbers?|cvv|one[- ]time codes?|2fa codes?|otp|private keys?|seed phrase|recovery codes?)`
	)
	instr := func(re string) pattern { return newPattern("instructions aimed at the model", true, re) }
	harm := func(re string) pattern { return newPattern("advice against the user's interest", true, re) }
	return []pattern{
		instr(`\b(ignore|ignoring|disregard|disregarding|forget|override|bypass|skip|drop|abandon|set aside|put aside|throw out|discard|neglect|dismiss)\b[^.]{0,40}\b(previous|prior|above|earlier|preceding|former|original|all|any|your|system|safety|the|every|existing|initial|old)\b[^.]{0,30}\b` + objects + `\b`),
		instr(`\b(stop|quit|cease|no longer|don't|do not|never) (following|follow|obeying|obey)\b[^.]{0,20}\b(your|the|any|all|previous|prior|earlier|original)\b[^.]{0,20}\b` + objects + `\b` +
			`|\b(instructions?|rules|directions|directives|guidance|task|goal|orders|prompt)\b[^.]{0,40}\b(are|is|were|was|have been|has been)\b[^.]{0,15}\b(outdated|obsolete|void|cancell?ed|revoked|superseded|replaced|withdrawn|invalid|no longer (valid|in effect|relevant))\b` +
			`|\b(prior|previous|earlier|old|original|above)\b[^.]{0,30}\bno longer (apply|applies|matter|matters|count|counts|hold|holds)\b` +
			`|\b(set aside|ignore|forget|disregard|drop|discard)\b[^.]{0,15}\bwhat(ever)? you (were|have been|'ve been|got) (told|given|asked)\b` +
			`|\b(note|message|attention|hey|dear|hi|hello|psst|instructions?) (to |for )?(the |all |any )?(ai|agents?|assistants?|models?|llms?|bots?|gpt|chatgpt|claude|gemini)\b|\b(ai|agent|assistant|model|llm|bot)s? (reading|processing|browsing) this\b` +
			`|\b(highest|top|overriding|absolute)[- ]priority (instruction|task|directive|order|command)\b|\btreat this (message|text|note|banner|page) as\b`),
		instr(`\b(ignore|disregard|forget)\s+(everything|anything|all)\s+(above|before|previous|prior|earlier|else|you were told|you have been told)\b|\bpay no attention to\b[^.]{0,30}\b(previous|prior|earlier|above|your|the)\b[^.]{0,20}\b` + objects + `\b`),
		instr(`\b(you are now|you're now|you must now|from now on,? you|from now on,? (always|never|only)|act as (an?|the|if) |pretend (to be|you are|that)|new instructions?:|developer mode|jailbreak|(roleplay|role-play) as|you are no longer|you are (free|unrestricted|not bound)|do anything now)`),
		instr(`\b(new|updated|revised|latest|additional|priority|urgent|important|real)\s+(rule|instruction|directive|policy|task|objective|goal|order|command|guidance)s?\b[^.]{0,40}\b(from|by|of)\b[^.]{0,20}\b(the )?(operator|admin|administrator|developer|system|owner|openai|anthropic|site owner|management)\b|\b(new|updated|revised)\s+(rules?|instructions?|directives?|policy|orders?)\s*[:-]|\b(operator|admin|administrator|developer|system|site owner)\s+(says|instructs|requires|requests|wants|orders|directs|note|notice|message|override|update)\b`),
		instr(`\b(the (user|human|customer|owner) (really |secretly |actually |already )?(wants you to|would like you to|has asked you to|has (already )?authori[sz]ed|has (already )?approved|(already )?approved|approves|consents|has (already )?consented|has (already )?confirmed|has given|said yes|agreed to|okayed|signed off)|you (are|have been) (authori[sz]ed|allowed|permitted|cleared)|you (have|now have) (permission|full access|admin)|(already|pre-?)(approved|authori[sz]ed) by the user)\b`),
		instr(`\b(do not|don't|never|without) (tell(ing)?|inform(ing)?|mention(ing)?|notify(ing)?|alert(ing)?|let(ting)?) (the )?(user|human|operator|person)\b|\b(keep|hide|conceal) (this|these|it)\b[^.]{0,20}\b(from|secret)\b`),
		instr(`\b(decode|decrypt|unscramble|translate|reverse|read backwards)\b[^.]{0,40}\b(and|then)\b[^.]{0,10}\b(follow|execute|run|obey|do|apply|perform|carry out)\b`),
		newPattern("a role or system marker", true,
			`(^|\n|\s)(system|assistant|developer)\s*:|(^|\n)user\s*:|<\|im_(start|end)\|>|\[/?inst\]|<</?sys>>|<\|(system|assistant|user|endoftext)\|>|###\s*(system|instruction)|\bsystem prompt\b`),
		newPattern("a request to reveal or send data", true,
			`\b(reveal|leak|disclose|dump|print|repeat|output)\b[^.]{0,40}\b`+data+`\b|\bexfiltrat`),
		// A quoted value right after the verb is text typed as it stands
		// (the engine's own flow facts read `type "reset password" into
		// "Search"`): a data word inside it sends no secret. A data word
		// anywhere else in the gap counts: one without quotes, one after
		// the quoted value closes, one after a gap that starts otherwise.
		newPattern("a request to reveal or send data", true,
			`\b(send|post|upload|forward|email|e-mail|transmit|paste|copy|share|submit|type|enter|put|include|add|give|read out)\b([^."“”]{0,40}|\s*["“][^"”]{0,40}["”][^.]{0,40}|\s+[^"“\s.][^.]{0,39})\b`+data+`\b[^.]{0,50}\b(to|into|in|via|through|with|at|on)\b[^.]{0,30}\b(form|field|box|chat|comment|message|review|url|address|link|server|endpoint|webhook|support|seller|third|external|search|feedback|survey|coupon|promo|note|ticket|forum|post)\b`),
		harm(`\b(type|enter|paste|put|fill|write|give|share|post|send|disclose)\b[^.]{0,30}\b(the )?(user'?s?|their|customer'?s?|personal|home|full|saved|real)\b[^.]{0,15}\b(password|card number|credit card|ssn|social security number|home address|address|phone number|passport( number)?|date of birth)\b[^.]{0,40}\b(into|in|to|with)\b[^.]{0,25}\b(search|comment|chat|review|feedback|promo|coupon|note|message|url|address bar|seller|public|forum|field named|other)\b`),
		harm(`\b(skip|bypass|avoid|ignore|without|no need for|don't wait for|do not wait for|never wait for|never ask for|don't ask for|do not ask for)\b[^.]{0,20}\b(the |any |user )*(confirmation|approval|review|asking( the user)?|checking with the user|user consent|consent|permission|verification)\b[^.]{0,60}\b(buy|purchase|pay|order|checkout|transfer|delete|submit|send|approve|accept|sign|refund|book|subscribe|charge)`),
		harm(`\b(always|automatically|immediately|just)\b[^.]{0,20}\b(buy|purchase|pay for|transfer|approve|accept|subscribe|donate|delete|order|upgrade to)\b[^.]{0,40}\b(without|before|instead of)\b[^.]{0,20}\b(asking|checking|confirming|the user|confirmation|approval|reviewing|reading)|\b(buy|choose|select|pick|order|add)\b[^.]{0,15}\b(the )?(most expensive|priciest|premium|maximum|highest[- ]priced)\b|\b(maximum|highest|largest) (tip|donation|quantity)\b|\b(subscribe|enroll|opt in|sign up)\b[^.]{0,30}\b(every|all|any)\b[^.]{0,20}\b(offers?|plans?|subscriptions?|trials?|newsletters?|marketing)\b`),
		harm(`\b(approve|accept|buy|purchase|pay|transfer|order|confirm|submit|delete|upgrade|subscribe|sign|book|refund|send money)\b[^.]{0,60}\b(without|no need for)\b[^.]{0,15}\b(asking|checking|confirming|confirmation|approval|consent|telling|the user'?s? (ok|approval|consent))\b`),
		harm(`\b(tick|check|enable|select|turn on|choose|click)\b[^.]{0,20}\b(save my card|save (the )?card|auto-?renew(al)?|automatic renewal|recurring (payment|billing|order)s?|one-click (buy|purchase|ordering))\b`),
		harm(`\b(security|certificate|phishing|malware|warning|unsafe|dangerous|deceptive|not private)\b[^.]{0,60}\b(continue anyway|proceed anyway|accept the risks?|i understand the risks?)\b|\b(continue anyway|proceed anyway)\b[^.]{0,40}\b(security|certificate|phishing|malware|warning|unsafe)\b`),
		harm(`\b(answer|say|click|choose|press|select)\s+['"‘“]?(yes|allow|accept|ok|agree)['"’”]?\s+(to|on|for|in)\s+(every|all|any|each)\b`),
		harm(`\b(tell|inform|assure)\s+(the\s+)?user\s+(that\s+)?(it|the \w+)\s+(did|succeeded|worked|went through|is done|was successful|is complete)\b`),
		harm(`\b(give|tell|send|share|read)\b[^.]{0,30}\b(support|agent|seller|caller|chat|representative|anyone|them|stranger)\b[^.]{0,20}\b(the )?(user'?s?|their|your)\b[^.]{0,10}\b` + data),
		harm(`\b(turn off|disable|mute|stop|silence)\b[^.]{0,25}\b(notifications?|alerts?|emails?|warnings?)\b[^.]{0,20}\b(for|about|of|on)\b[^.]{0,10}\b(new |unknown |suspicious )?(logins?|sign-?ins?|devices?|security|transactions?|payments?|fraud|password changes?)\b`),
		harm(`\b(pick|choose|select|buy|order)\b[^.]{0,15}\b(largest|biggest|most expensive|priciest|premium)\b[^.]{0,30}\b(by default|always|every time|whenever)\b|\b(always|by default)\b[^.]{0,15}\b(pick|choose|select|buy|order)\b[^.]{0,15}\b(largest|biggest)\b`),
		harm(`\b(download|install)\b[^.]{0,30}\b(app|application|installer|extension|plugin|add-on|viewer|player|codec|driver|software|program|helper)\b`),
		harm(`\b(report|mark|finish|return|say|claim|answer|declare|end)\b[^.]{0,30}\b(success|successful|succeeded|done|complete|completed|passed|true)\b[^.]{0,40}\b(even if|even when|regardless|without (checking|verifying|looking|confirming)|whether or not|no matter)`),
		harm(`\b(bypass|ignore|click through|proceed past|disable|turn off|dismiss|skip|remove|switch off)\b[^.]{0,20}\b(the )?(certificate|security|ssl|tls|https|phishing|malware|safe browsing|antivirus|firewall|two-factor|2fa|mfa|multi-factor|fraud|site isolation|protection)\b[^.]{0,20}\b(warnings?|errors?|checks?|pages?|interstitials?|authentication|settings?|protection|alerts?|screens?)?`),
		harm(`\b(download|install|run|execute|open|launch)\b[^.]{0,25}\b(and (run|open|install|execute|launch)|the (installer|extension|plugin|add-on|helper|update|app|program|file)|any (installer|extension|plugin|file)|this (installer|extension|plugin|file|program))\b`),
		// A program's file name is a shape of characters, not of words: in
		// a reversed reading any "tab." is a ".bat".
		newPattern("advice against the user's interest", false, `\.(exe|apk|dmg|msi|bat|ps1|sh)\b`),
		harm(`\b(use|enter|type|try|the)\b[^.]{0,15}\b(password|passcode|pin|api key|token|login)\b(\s+is)?\s+["'‘“][^"'’”\s=]{3,}["'’”]|\b(password|passcode|pin)\s+is\s+["']?[a-z]{2,}[0-9!@#$%^&*][^\s"',;.]*`),
		harm(`\b(delete|remove|erase|wipe|close|cancel|deactivate)\b[^.]{0,15}\b(the user'?s?|their|all( of the)?|every|your)\b[^.]{0,15}\b(account|accounts|data|emails|files|repositor(y|ies)|orders|history|contacts|backups|photos|documents|subscriptions|addresses|cards|payment methods|passwords|messages|reviews|friends)\b`),
		newPattern("code or markup", false,
			"<\\s*/?\\s*(script|object|embed|style|meta|base|frameset|applet)\\b|javascript:|vbscript:|data:text/html|\\bsrcdoc\\s*=|\\bon(error|load|click|mouseover|focus|begin|toggle)\\s*=|```|\\$\\{|\\{\\{|\\beval\\s*\\(|\\bfetch\\s*\\(|\\bdocument\\.(cookie|location|write)|\\bwindow\\.location|\\brequire\\s*\\(|\\bimport\\s*\\(|\\bcurl\\s+-|\\bwget\\s+http|\\brm\\s+-rf\\b|;\\s*drop\\s+table"),
		instr(`(не обращай(те)? внимания на|ignora|ignorar|ignorez|ignore[rz]?|ignoriere|ignoriert|ignorieren|oublie[zr]?|olvida|olvide|olvidar|vergiss|vergessen sie|dimentica|esqueça|esquece|игнорируй(те)?|игнорировать|забудь(те)?|negeer|zignoruj|görmezden gel)[^.。]{0,50}(instrucciones|instructions|instructies|anweisungen|instruktionen|istruzioni|instruções|инструкции|указания|правила|règles|regeln|reglas|regole|regras|consignes|vorgaben|indicaciones|richtlijnen|instrukcje|talimatları)` +
			`|(忽略|无视|忘记|忘掉|無視|忘れ)[^。.]{0,20}(指令|指示|说明|规则|提示|命令|ルール|プロンプト)|(指令|指示|规则|プロンプト|ルール)[^。.]{0,10}(を|は)?(すべて|全て)?(無視|忽略|忘れ|忘记)|(이전|모든)[^.]{0,10}(지시|명령)[^.]{0,10}무시|تجاهل[^.]{0,30}(التعليمات|الأوامر)`),
		instr(`(prompt del sistema|prompt de sistema|invite (du )?système|invite (du )?systeme|prompt système|systemprompt|system-prompt|prompt di sistema|системн(ый|ого) (промпт|подсказк)|系统提示|システムプロンプト)`),
		instr(`(sin (preguntar|avisar|informar) al usuario|sans (demander|prévenir|informer) (à )?l'utilisateur|ohne den benutzer zu (fragen|informieren)|senza (chiedere|avvisare) (all')?utente|sem (perguntar|avisar) (ao )?usuário|не (спрашивая|сообщая) пользовател|不要告诉用户|无需用户确认|ユーザーに(確認せず|知らせず))`),
		instr(`(envía|envia|envoie[zr]?|sende|senden sie|invia|manda|отправь(те)?|перешли|发送|送信|pega|colle[zr]?|incolla|вставь(те)?)[^.。]{0,50}(contraseña|mot de passe|passwort|password|senha|пароль|密码|パスワード|cookies?|куки|token|токен|tarjeta|carte bancaire|kreditkarte|carta di credito|cartão|карт)`),
	}
}

// linkRE finds URLs, host names starting www., email addresses and bare
// host names under a common or abused top-level domain ("visit
// evil.example and ..."), in text.
var linkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s"'<>)]+|www\.[^\s"'<>)]+|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+` + bareTLDs + `\b)`)
})

// bareTLDs are the top-level domains a bare host name is recognised by:
// the common ones and those cheap domains abuse favours, not every TLD
// ("window.top", "main.js" and "index.html" are no hosts).
const bareTLDs = `(?:com|net|org|io|ru|cn|xyz|info|biz|example|tk|ml|ga|cf|gq|pw|su|cc|zip|mov|co|uk|de|fr|us)`

// bareTLD matches the end of a bare host name, for the shortcut.
var bareTLD = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[a-z0-9]\.` + bareTLDs + `\b`)
})

// bareHost reports whether lower may name a bare host ("evil.example"): a
// letter or digit, a dot and a letter, before bareTLD's expression runs.
func bareHost(lower string) bool {
	for i := 1; i+1 < len(lower); i++ {
		if lower[i] == '.' && (asciiLetter(lower[i-1]) || lower[i-1] >= '0' && lower[i-1] <= '9') && asciiLetter(lower[i+1]) {
			return bareTLD().MatchString(lower)
		}
	}
	return false
}

// foreignLink returns the host of the first URL or email address in text
// (lower is text lower-cased) that is not within own's site, or "".
func foreignLink(text, lower, own string) string {
	if !strings.Contains(text, "://") && !strings.Contains(text, "@") && !strings.Contains(lower, "www.") && !bareHost(lower) {
		return ""
	}
	ownSite := ""
	if own != "" {
		if h, err := domain.Host(own); err == nil {
			ownSite = domain.Site(h)
		}
	}
	for _, m := range linkRE().FindAllString(text, -1) {
		host := ""
		switch {
		case strings.Contains(m, "@") && !strings.Contains(m, "://"):
			if a, err := mail.ParseAddress(m); err == nil {
				host = a.Address[strings.LastIndexByte(a.Address, '@')+1:]
			} else {
				host = m[strings.LastIndexByte(m, '@')+1:]
			}
		default:
			u := m
			if !strings.Contains(u, "://") {
				u = "http://" + u
			}
			p, err := url.Parse(u)
			if err == nil && p.Scheme == "file" {
				continue
			}
			if err != nil || p.Hostname() == "" {
				return m
			}
			host = p.Hostname()
		}
		if strings.HasPrefix(strings.ToLower(m), "file:") {
			continue // a local file: no site, and runs navigate http(s) only
		}
		h, err := domain.Host(host)
		if err != nil {
			return host
		}
		if loopback(h) || docsHosts[domain.Site(h)] {
			continue
		}
		if ownSite == "" || domain.Site(h) != ownSite {
			return h
		}
	}
	return ""
}

// loopback reports the machine's own names: a development server's errors
// name them, and a run's navigation policy refuses them unless the run
// starts there.
func loopback(h string) bool {
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "127.0.0.1" || h == "::1" || h == "[::1]"
}

// docsHosts are the documentation sites browsers and frameworks cite in
// their own error messages ("visit https://react.dev/errors/418"): a link
// to them is no lure.
var docsHosts = map[string]bool{
	"react.dev": true, "reactjs.org": true, "mozilla.org": true, "chrome.com": true, "chromestatus.com": true,
	"crbug.com": true, "chromium.org": true, "w3.org": true, "playwright.dev": true, "web.dev": true,
	"nextjs.org": true, "vuejs.org": true, "angular.dev": true, "angular.io": true, "svelte.dev": true,
}
