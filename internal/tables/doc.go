// Package tables prints the tables of scaleplan's commands: rows of
// display cells under a header, as aligned text, Markdown, csv or json.
// In csv and json a column has a snake_case key with the suffix of its
// unit and its cells are numbers in SI base units ("56.5 min" is 3390 in
// time_to_train_s), null where a cell holds no value (docs/output.md).
//
// A command with several tables prints them with Write, which prints one
// in csv, and every one, or the one a Chooser names, in json. The cell
// helpers (Num, NumInterval, WholeCell, ...) format the figures of a row.
package tables
