package filesystem

// SetLimits lowers the listing limits of td, so that tests need few files.
func SetLimits(td *ToolDriver, listEntries, searchResults, searchVisits int) {
	td.limits.listEntries, td.limits.searchResults, td.limits.searchVisits = listEntries, searchResults, searchVisits
}

// SetMoveLimit lowers the number of entries move_file checks below a directory.
func SetMoveLimit(td *ToolDriver, moveEntries int) {
	td.limits.moveEntries = moveEntries
}
