package filesystem

// SetLimits lowers the listing limits of td, so that tests need few files.
func SetLimits(td *ToolDriver, listEntries, searchResults, searchVisits int) {
	td.limits = limits{listEntries, searchResults, searchVisits}
}
