<?php
/**
 * The plugin's settings: an option the settings page writes, and constants in
 * wp-config.php, which win over the option and lock its field on the page.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** The option that holds the settings made on the settings page. */
const AGEGATE_OPTION = 'agegate_settings';

/**
 * Each setting: its key in the option and the constant that overrides it.
 *
 * @return array<string, string> constant name => option key.
 */
function agegate_setting_constants(): array {
	return array(
		'AGEGATE_URL'            => 'url',
		'AGEGATE_SITE_ID'        => 'site_id',
		'AGEGATE_USERNAME'       => 'username',
		'AGEGATE_PASSWORD'       => 'password',
		'AGEGATE_WEBHOOK_SECRET' => 'webhook_secret',
		'AGEGATE_GATE_ALL'       => 'gate_all',
		'AGEGATE_REMEMBER_DAYS'  => 'remember_days',
	);
}

/**
 * Whether a setting is fixed by a constant in wp-config.php.
 *
 * @param string $key The option key.
 */
function agegate_setting_locked( string $key ): bool {
	$constant = array_search( $key, agegate_setting_constants(), true );
	return false !== $constant && defined( $constant );
}

/**
 * One setting's value: the constant if defined, else the saved option, else the default.
 *
 * @param string $key The option key.
 * @return string|bool|int
 */
function agegate_setting( string $key ) {
	$constant = array_search( $key, agegate_setting_constants(), true );
	if ( false !== $constant && defined( $constant ) ) {
		$value = constant( $constant );
	} else {
		$saved = get_option( AGEGATE_OPTION, array() );
		$value = is_array( $saved ) && array_key_exists( $key, $saved ) ? $saved[ $key ] : null;
	}
	switch ( $key ) {
		case 'gate_all':
			return (bool) $value;
		case 'remember_days':
			$days = null === $value || '' === $value ? 30 : (int) $value;
			return max( 1, min( 3650, $days ) );
		case 'url':
			return untrailingslashit( (string) $value );
		default:
			return is_scalar( $value ) ? trim( (string) $value ) : '';
	}
}

/** Whether the four settings needed to create and read invites are all there. */
function agegate_configured(): bool {
	foreach ( array( 'url', 'site_id', 'username', 'password' ) as $key ) {
		if ( '' === agegate_setting( $key ) ) {
			return false;
		}
	}
	return true;
}

/** How long a verification is remembered, in seconds. */
function agegate_remember_seconds(): int {
	return (int) agegate_setting( 'remember_days' ) * DAY_IN_SECONDS;
}

/** The URL agegate sends verified visitors back to: the site's redirect URL in agegate. */
function agegate_return_url(): string {
	return add_query_arg( 'agegate_return', '1', home_url( '/' ) );
}

/** The URL agegate sends its webhooks to: the site's webhook URL in agegate. */
function agegate_webhook_url(): string {
	return rest_url( 'agegate/v1/webhook' );
}
