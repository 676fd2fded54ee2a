-- Participant filters at a million rows, beside the indexes of 002 (which this does not repeat).
-- Filtering by ICD and a modification-date range: the count of `totalElements` is read from this index
-- alone (delete_date is included for the liveness test), without touching the table.
CREATE INDEX participants_icd_modification_idx ON participants (icd, last_modification_date) INCLUDE (delete_date);
-- The same filter sorted by name: a page is read in (name, id) order within the ICD, so a rare ICD no longer
-- walks the whole name index (tens of thousands of rows) to find its 50 participants.
CREATE INDEX participants_icd_name_idx ON participants (icd, name, id);
