-- What the SMP publishes per access point endpoint (issue 12): the access point's certificate (base64 DER,
-- parsed and checked when stored), a service description, a technical contact URL and the activation and
-- expiration dates. All optional: an endpoint without a certificate is not published.
ALTER TABLE endpoints
  ADD COLUMN certificate text,
  ADD COLUMN service_description text,
  ADD COLUMN technical_contact_url text,
  ADD COLUMN activation_date timestamptz,
  ADD COLUMN expiration_date timestamptz;
