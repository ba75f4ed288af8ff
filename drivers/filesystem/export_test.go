package filesystem

import "github.com/mcs-go/mcs/internal/filetools"

// SetLimits lowers the listing limits of td, so that tests need few files.
func SetLimits(td *ToolDriver, listEntries, searchResults, searchVisits int) {
	l := filetools.GetLimits(td.fileTools)
	l.ListEntries, l.SearchResults, l.SearchVisits = listEntries, searchResults, searchVisits
	filetools.SetLimits(td.fileTools, l)
}

// SetMoveLimit lowers the number of entries move_file checks below a directory.
func SetMoveLimit(td *ToolDriver, moveEntries int) {
	l := filetools.GetLimits(td.fileTools)
	l.MoveEntries = moveEntries
	filetools.SetLimits(td.fileTools, l)
}
