-- docs/dc-api.md#the-requests: each live presentation request keeps the secrets of the Digital
-- Credentials API channel, so every node rebuilds the same requests on every reload:
-- the private scalar of its P-256 response-encryption key (32 bytes; never sent) and
-- the nonce of Annex C's encryptionInfo (16 to 64 bytes). Both are NULL for a request
-- an older release made (it is given secrets when next shown) and once the request is
-- answered: the key is of no further use, so it is not kept. Comparisons, not IN, in
-- the checks (migration 6).
ALTER TABLE presentation_requests ADD COLUMN response_key BLOB
    CHECK (response_key IS NULL OR length(response_key) = 32);
ALTER TABLE presentation_requests ADD COLUMN encryption_nonce BLOB
    CHECK ((encryption_nonce IS NULL) = (response_key IS NULL)
           AND (encryption_nonce IS NULL OR length(encryption_nonce) BETWEEN 16 AND 64));
