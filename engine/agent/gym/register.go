package gym

// Register adds a site to the gym: the gym's own sites register from their
// files; a test may add a site of its own. It panics on a name used twice
// or a task not named for its site.
func Register(s Site) { register(s) }
