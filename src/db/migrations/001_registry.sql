-- The registry's data model. Identifiers are UUIDs made by the database; the qualified identifiers of
-- the catalogue are (scheme, value) pairs, unique per resource.

CREATE TABLE access_point_providers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL,
  contact_name text,
  contact_email text,
  contact_phone text
);

CREATE TABLE transport_profiles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  value text NOT NULL UNIQUE,
  title text NOT NULL,
  restricted boolean NOT NULL DEFAULT false
);

CREATE TABLE access_points (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL,
  provider_id uuid NOT NULL REFERENCES access_point_providers (id)
);
CREATE INDEX access_points_provider_idx ON access_points (provider_id);

CREATE TABLE endpoints (
  access_point_id uuid NOT NULL REFERENCES access_points (id) ON DELETE CASCADE,
  position integer NOT NULL,
  url text NOT NULL,
  transport_profile_id uuid NOT NULL REFERENCES transport_profiles (id),
  certificate_types text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (access_point_id, position)
);
CREATE INDEX endpoints_transport_profile_idx ON endpoints (transport_profile_id);

CREATE TABLE service_providers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL,
  access_point_id uuid REFERENCES access_points (id)
);
CREATE INDEX service_providers_access_point_idx ON service_providers (access_point_id);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username text NOT NULL,
  password_hash text NOT NULL,
  role text NOT NULL CHECK (role IN ('SERVICE_PROVIDER', 'ACCESS_POINT_PROVIDER', 'ADMIN', 'REGISTRY_AUTHORITY')),
  service_provider_id uuid REFERENCES service_providers (id) ON DELETE CASCADE,
  access_point_provider_id uuid REFERENCES access_point_providers (id) ON DELETE CASCADE,
  CHECK ((role = 'SERVICE_PROVIDER') = (service_provider_id IS NOT NULL)),
  CHECK ((role = 'ACCESS_POINT_PROVIDER') = (access_point_provider_id IS NOT NULL))
);
CREATE UNIQUE INDEX users_username_key ON users (lower(username));

CREATE TABLE capabilities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL
);

CREATE TABLE processes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  scheme text NOT NULL,
  value text NOT NULL,
  domain text NOT NULL,
  title text NOT NULL,
  alias text,
  restricted boolean NOT NULL,
  visible boolean NOT NULL,
  required_icds text[] NOT NULL DEFAULT '{}',
  UNIQUE (scheme, value)
);

CREATE TABLE document_types (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  scheme text NOT NULL,
  value text NOT NULL,
  title text NOT NULL,
  visible boolean NOT NULL,
  restricted boolean NOT NULL DEFAULT false,
  domain_community text,
  UNIQUE (scheme, value)
);

CREATE TABLE process_capabilities (
  process_id uuid NOT NULL REFERENCES processes (id) ON DELETE CASCADE,
  capability_id uuid NOT NULL REFERENCES capabilities (id),
  PRIMARY KEY (process_id, capability_id)
);
CREATE INDEX process_capabilities_capability_idx ON process_capabilities (capability_id);

CREATE TABLE process_document_types (
  process_id uuid NOT NULL REFERENCES processes (id) ON DELETE CASCADE,
  document_type_id uuid NOT NULL REFERENCES document_types (id) ON DELETE CASCADE,
  PRIMARY KEY (process_id, document_type_id)
);
CREATE INDEX process_document_types_document_type_idx ON process_document_types (document_type_id);

CREATE TABLE process_dependencies (
  process_id uuid NOT NULL REFERENCES processes (id) ON DELETE CASCADE,
  dependency_id uuid NOT NULL REFERENCES processes (id),
  PRIMARY KEY (process_id, dependency_id),
  CHECK (process_id <> dependency_id)
);
CREATE INDEX process_dependencies_dependency_idx ON process_dependencies (dependency_id);

-- A participant is one organization's customer relation with one service provider. The organization
-- is (icd, organization_identifier), the identifier stored in canonical lower case.
CREATE TABLE participants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  service_provider_id uuid NOT NULL REFERENCES service_providers (id),
  icd text NOT NULL,
  organization_identifier text NOT NULL CHECK (organization_identifier = lower(organization_identifier)),
  organization_part_identifier text,
  source_indicator text,
  name text,
  registration_date date NOT NULL,
  last_modification_date date NOT NULL,
  delete_date date,
  contact_name text NOT NULL,
  contact_email text,
  contact_phone text,
  UNIQUE (icd, organization_identifier, service_provider_id),
  UNIQUE (id, icd, organization_identifier)
);
CREATE INDEX participants_service_provider_idx ON participants (service_provider_id);
CREATE INDEX participants_last_modification_idx ON participants (last_modification_date);

-- The organization key is repeated here so that the database itself guarantees that one process of
-- one organization is served by one provider only, whatever races between requests.
CREATE TABLE participant_processes (
  participant_id uuid NOT NULL,
  process_id uuid NOT NULL REFERENCES processes (id),
  icd text NOT NULL,
  organization_identifier text NOT NULL,
  PRIMARY KEY (participant_id, process_id),
  UNIQUE (icd, organization_identifier, process_id),
  FOREIGN KEY (participant_id, icd, organization_identifier)
    REFERENCES participants (id, icd, organization_identifier) ON DELETE CASCADE
);
CREATE INDEX participant_processes_process_idx ON participant_processes (process_id);
