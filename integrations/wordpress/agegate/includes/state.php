<?php
/**
 * Who the visitor is to agegate, and whether they are verified.
 *
 * A logged-in user is verified while the user meta `agegate_verified_at` (Unix seconds)
 * is within the remembered time; a visitor while the cookie `agegate_verified` holds an
 * expiry in the future and a valid HMAC of it, keyed with the site's auth salt. Nothing
 * else about the check is stored.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

const AGEGATE_VERIFIED_COOKIE = 'agegate_verified';
const AGEGATE_VISITOR_COOKIE  = 'agegate_visitor';
const AGEGATE_BACK_COOKIE     = 'agegate_back';
const AGEGATE_USER_META       = 'agegate_verified_at';

/**
 * Sets a cookie of the plugin: HttpOnly, SameSite=Lax (it survives agegate's top-level
 * redirect back), Secure when the site is https.
 *
 * @param string $name    The cookie's name.
 * @param string $value   Its value ('' with a past expiry removes it).
 * @param int    $expires Unix seconds.
 */
function agegate_set_cookie( string $name, string $value, int $expires ): void {
	if ( headers_sent() ) {
		return;
	}
	setcookie(
		$name,
		$value,
		array(
			'expires'  => $expires,
			'path'     => COOKIEPATH ? COOKIEPATH : '/',
			'domain'   => COOKIE_DOMAIN ? COOKIE_DOMAIN : '',
			'secure'   => 'https' === wp_parse_url( home_url(), PHP_URL_SCHEME ),
			'httponly' => true,
			'samesite' => 'Lax',
		)
	);
	$_COOKIE[ $name ] = $value;
}

/**
 * A cookie's value as sent by the browser, or ''.
 *
 * @param string $name The cookie's name.
 */
function agegate_cookie( string $name ): string {
	return isset( $_COOKIE[ $name ] ) ? sanitize_text_field( wp_unslash( $_COOKIE[ $name ] ) ) : '';
}

/**
 * The page to go back to after the verification, from its cookie: a URL of this site
 * (wp_validate_redirect), else the home page. Read as a URL, not as text, so that
 * percent-encoded characters of a path survive.
 */
function agegate_back_url(): string {
	$url = isset( $_COOKIE[ AGEGATE_BACK_COOKIE ] ) ? esc_url_raw( wp_unslash( $_COOKIE[ AGEGATE_BACK_COOKIE ] ) ) : '';
	return wp_validate_redirect( $url, home_url( '/' ) );
}

/**
 * The HMAC that makes a verified cookie for `$expires`.
 *
 * @param int $expires Unix seconds.
 */
function agegate_cookie_mac( int $expires ): string {
	return hash_hmac( 'sha256', 'agegate_verified|' . $expires, wp_salt( 'auth' ) );
}

/** Whether the visitor's verified cookie is genuine and unexpired. */
function agegate_cookie_verified(): bool {
	$parts = explode( '.', agegate_cookie( AGEGATE_VERIFIED_COOKIE ) );
	if ( 2 !== count( $parts ) || ! ctype_digit( $parts[0] ) ) {
		return false;
	}
	$expires = (int) $parts[0];
	$now     = time();
	// A genuine cookie never outlives the remembered time from now (as it is set now).
	if ( $expires <= $now || $expires > $now + agegate_remember_seconds() ) {
		return false;
	}
	return hash_equals( agegate_cookie_mac( $expires ), $parts[1] );
}

/** Whether the logged-in user's verification is recent enough. */
function agegate_user_verified(): bool {
	$user_id = get_current_user_id();
	if ( ! $user_id ) {
		return false;
	}
	$at = (int) get_user_meta( $user_id, AGEGATE_USER_META, true );
	return $at > 0 && $at + agegate_remember_seconds() > time();
}

/** Whether the current visitor or user is verified. */
function agegate_is_verified(): bool {
	static $verified = null;
	if ( null === $verified ) {
		$verified = agegate_user_verified() || agegate_cookie_verified();
	}
	return $verified || did_action( 'agegate_verified' ) > 0;
}

/**
 * Marks a user verified now (after the return route's check, or a webhook).
 *
 * @param int $user_id The user.
 */
function agegate_mark_user_verified( int $user_id ): void {
	update_user_meta( $user_id, AGEGATE_USER_META, time() );
}

/** Marks the current visitor verified: the user meta when logged in, else the cookie. */
function agegate_mark_verified(): void {
	$user_id = get_current_user_id();
	if ( $user_id ) {
		agegate_mark_user_verified( $user_id );
	} else {
		$expires = time() + agegate_remember_seconds();
		agegate_set_cookie( AGEGATE_VERIFIED_COOKIE, $expires . '.' . agegate_cookie_mac( $expires ), $expires );
	}
	do_action( 'agegate_verified' );
}

/** The id of a visitor who is not logged in: random, kept in a cookie for a day. */
function agegate_visitor_id(): string {
	$id = agegate_cookie( AGEGATE_VISITOR_COOKIE );
	if ( 1 === preg_match( '/^v_[0-9a-f]{32}$/', $id ) ) {
		return $id;
	}
	$id = 'v_' . bin2hex( random_bytes( 16 ) );
	agegate_set_cookie( AGEGATE_VISITOR_COOKIE, $id, time() + DAY_IN_SECONDS );
	return $id;
}

/**
 * The customId of the current visitor: the logged-in user's id, else the visitor's id.
 *
 * @param bool $create Whether to give a visitor an id when they have none yet.
 * @return string The id, or '' for a visitor without one when `$create` is false.
 */
function agegate_custom_id( bool $create ): string {
	$user_id = get_current_user_id();
	if ( $user_id ) {
		return (string) $user_id;
	}
	if ( ! $create ) {
		$id = agegate_cookie( AGEGATE_VISITOR_COOKIE );
		return 1 === preg_match( '/^v_[0-9a-f]{32}$/', $id ) ? $id : '';
	}
	return agegate_visitor_id();
}
