-- Whether the access point of an endpoint requires a business-level signature on the documents it receives
-- (issue 12): published per endpoint as the SMP's `RequireBusinessLevelSignature`. Endpoints from before keep
-- what the SMP published for them until now: false.
ALTER TABLE endpoints ADD COLUMN require_business_level_signature boolean NOT NULL DEFAULT false;
