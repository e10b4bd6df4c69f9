package logs

// Names the external fuzz targets (package logs_test, which also fits what
// the readers return) need from inside the package.
var (
	CheckBounds = checkBounds
	CSVRowsOf   = csvRowsOf
	MLRunEvents = mlRunEvents
	MLLog       = mlLog
)

const (
	MgArgumentsStart = mgArgumentsStart
	MgArgumentsEnd   = mgArgumentsEnd
)
