-- The code lists give a process or document type a removal date: from that instant (the start of the day, UTC) it is
-- no longer published (SMP, Directory, public lookup), while the participants that have it keep it on their record.
-- An instant, not a day, so the authority can set one of its own to the second.
ALTER TABLE processes ADD COLUMN removed_from timestamptz;
ALTER TABLE document_types ADD COLUMN removed_from timestamptz;

-- The state the last loaded code list gave each entry (null: never loaded from one). A load lifts only the
-- restriction a code list made; one the authority set stays (src/code-lists/repository.ts).
ALTER TABLE processes ADD COLUMN code_list_state text CHECK (code_list_state IN ('active', 'deprecated', 'removed'));
ALTER TABLE document_types ADD COLUMN code_list_state text CHECK (code_list_state IN ('active', 'deprecated', 'removed'));

-- The next removal instants are looked up by every instance after each catalogue change.
CREATE INDEX processes_removed_from ON processes (removed_from) WHERE removed_from IS NOT NULL;
CREATE INDEX document_types_removed_from ON document_types (removed_from) WHERE removed_from IS NOT NULL;
