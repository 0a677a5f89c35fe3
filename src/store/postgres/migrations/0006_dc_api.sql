-- docs/dc-api.md#the-requests: each live presentation request keeps the secrets of the Digital
-- Credentials API channel, so every node rebuilds the same requests on every reload:
-- the private scalar of its P-256 response-encryption key (32 bytes; never sent) and
-- the nonce of Annex C's encryptionInfo (16 to 64 bytes). Both are NULL for a request
-- an older release made (it is given secrets when next shown; older nodes keep working
-- during a rolling upgrade) and once the request is answered: the key is of no further
-- use, so it is not kept. Adding nullable columns rewrites no rows.
ALTER TABLE presentation_requests
    ADD COLUMN response_key BYTEA,
    ADD COLUMN encryption_nonce BYTEA,
    ADD CONSTRAINT presentation_requests_dc_api CHECK (
        (response_key IS NULL) = (encryption_nonce IS NULL)
        AND (response_key IS NULL OR octet_length(response_key) = 32)
        AND (encryption_nonce IS NULL OR octet_length(encryption_nonce) BETWEEN 16 AND 64));
