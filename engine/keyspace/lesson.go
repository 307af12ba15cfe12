package keyspace

import "fmt"

// LessonID maps a lesson id to the site it is stored under.
func LessonID(id string) []byte { return []byte("id/lesson/" + esc(id)) }

// LessonIDPrefix is the range of all lesson ids.
func LessonIDPrefix() []byte { return []byte("id/lesson/") }

// Lesson is the key of a lesson record.
func Lesson(site, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson/" + esc(id))
}

// Lessons is the range of one site's lesson records.
func Lessons(site string) []byte { return []byte("site/" + esc(site) + "/lesson/") }

// use renders a use count so that keys sort most used first.
func use(n int) string { return fmt.Sprintf("%016x", ^uint64(n)) }

// LessonByCommand indexes a lesson under its failed_command ("" for none),
// most used first.
func LessonByCommand(site, cmd string, useCount int, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson-cmd/" + esc(cmd) + "/" + use(useCount) + "/" + esc(id))
}

// LessonsByCommand is the range of one site's lessons for one command.
func LessonsByCommand(site, cmd string) []byte {
	return []byte("site/" + esc(site) + "/lesson-cmd/" + esc(cmd) + "/")
}

// LessonByHost indexes a site-bound lesson under the host it is bound to,
// most used first.
func LessonByHost(site, host string, useCount int, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson-host/" + esc(host) + "/" + use(useCount) + "/" + esc(id))
}

// LessonsByHost is the range of the lessons bound to exactly host.
func LessonsByHost(site, host string) []byte {
	return []byte("site/" + esc(site) + "/lesson-host/" + esc(host) + "/")
}

// Tier1 orders a Tier 1 lesson: most used first, seeds before learned at
// equal use, then by id.
func Tier1(useCount int, seed bool, id string) []byte {
	src := "1"
	if seed {
		src = "0"
	}
	return []byte("site/" + Global + "/tier1/" + use(useCount) + src + "/" + esc(id))
}

// Tier1Prefix is the range of the Tier 1 order.
func Tier1Prefix() []byte { return []byte("site/" + Global + "/tier1/") }

// LessonDue indexes a learned lesson by the day it was last used.
func LessonDue(lastUsed, id string) []byte { return []byte("due/lesson/" + lastUsed + "/" + esc(id)) }

// LessonDuePrefix is the range of the last-used index.
func LessonDuePrefix() []byte { return []byte("due/lesson/") }
