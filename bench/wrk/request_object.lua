-- The request object by reference, fetched as wallets on @openid4vc/openid4vp do: POST
-- with the wallet's metadata as separate form fields. Every fetch is signed (ES256).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "vp_formats_supported=%7B%22mso_mdoc%22%3A%7B%7D%7D"
  .. "&authorization_encryption_enc_values_supported=%5B%22A128GCM%22%2C%22A256GCM%22%5D"
