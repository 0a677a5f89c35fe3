<?php
/**
 * The admin side: Settings → agegate, and the box "Requires age verification" in the
 * editor of posts and pages.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/**
 * The settings page's fields: option key => [label, input type, help].
 *
 * @return array<string, array{0: string, 1: string, 2: string}>
 */
function agegate_fields(): array {
	return array(
		'url'            => array( __( 'agegate URL', 'agegate' ), 'url', __( 'The public URL of the agegate service, e.g. https://verify.example.', 'agegate' ) ),
		'site_id'        => array( __( 'Site ID', 'agegate' ), 'text', __( 'The siteId that agegate site create printed.', 'agegate' ) ),
		'username'       => array( __( 'Username', 'agegate' ), 'text', __( 'The username of the site\'s credential.', 'agegate' ) ),
		'password'       => array( __( 'Password', 'agegate' ), 'password', __( 'The password of the site\'s credential. It is never shown again; leave empty to keep the one saved.', 'agegate' ) ),
		'webhook_secret' => array( __( 'Webhook secret', 'agegate' ), 'password', __( 'The site\'s webhook secret (whsec_…), for users verified by webhook. It is never shown again; leave empty to keep the one saved.', 'agegate' ) ),
		'gate_all'       => array( __( 'Gate everything', 'agegate' ), 'checkbox', __( 'Every front-end page requires age verification.', 'agegate' ) ),
		'remember_days'  => array( __( 'Remember for (days)', 'agegate' ), 'number', __( 'How long a verification lasts before it is asked for again.', 'agegate' ) ),
	);
}

/**
 * Cleans the submitted settings; secrets left empty keep their saved value, and a field
 * locked by a constant is not saved.
 *
 * @param mixed $input The submitted values.
 * @return array<string, string|int|bool>
 */
function agegate_sanitize_settings( $input ): array {
	$input = is_array( $input ) ? $input : array();
	$saved = get_option( AGEGATE_OPTION, array() );
	$saved = is_array( $saved ) ? $saved : array();
	$clean = array();
	foreach ( array_keys( agegate_fields() ) as $key ) {
		if ( agegate_setting_locked( $key ) ) {
			continue;
		}
		$value = isset( $input[ $key ] ) ? wp_unslash( $input[ $key ] ) : '';
		switch ( $key ) {
			case 'url':
				$clean[ $key ] = untrailingslashit( esc_url_raw( trim( (string) $value ), array( 'http', 'https' ) ) );
				break;
			case 'password':
			case 'webhook_secret':
				$value         = trim( (string) $value );
				$clean[ $key ] = '' === $value ? (string) ( $saved[ $key ] ?? '' ) : $value;
				break;
			case 'gate_all':
				$clean[ $key ] = ! empty( $value );
				break;
			case 'remember_days':
				$clean[ $key ] = max( 1, min( 3650, absint( $value ) ) );
				break;
			default:
				$clean[ $key ] = sanitize_text_field( (string) $value );
		}
	}
	return $clean;
}

add_action(
	'admin_init',
	static function () {
		register_setting(
			'agegate',
			AGEGATE_OPTION,
			array(
				'type'              => 'array',
				'sanitize_callback' => 'agegate_sanitize_settings',
				'show_in_rest'      => false,
			)
		);
		add_settings_section( 'agegate_main', '', 'agegate_settings_intro', 'agegate' );
		foreach ( agegate_fields() as $key => $field ) {
			add_settings_field(
				'agegate_' . $key,
				esc_html( $field[0] ),
				'agegate_render_field',
				'agegate',
				'agegate_main',
				array(
					'key'       => $key,
					'label_for' => 'agegate_' . $key,
				)
			);
		}
	}
);

/** The text above the fields: what to give agegate about this site. */
function agegate_settings_intro(): void {
	echo '<p>' . esc_html__( 'Create the site in agegate with these two URLs:', 'agegate' ) . '</p><ul>';
	echo '<li>' . esc_html__( 'Redirect URL:', 'agegate' ) . ' <code>' . esc_html( agegate_return_url() ) . '</code></li>';
	echo '<li>' . esc_html__( 'Webhook URL:', 'agegate' ) . ' <code>' . esc_html( agegate_webhook_url() ) . '</code></li></ul>';
}

/**
 * One field. A secret's saved value is never written into the page.
 *
 * @param array{key: string} $args The field's key.
 */
function agegate_render_field( array $args ): void {
	$key    = $args['key'];
	$field  = agegate_fields()[ $key ];
	$locked = agegate_setting_locked( $key );
	$name   = AGEGATE_OPTION . '[' . $key . ']';
	$id     = 'agegate_' . $key;
	if ( 'checkbox' === $field[1] ) {
		printf(
			'<input type="checkbox" id="%1$s" name="%2$s" value="1" %3$s %4$s>',
			esc_attr( $id ),
			esc_attr( $name ),
			checked( (bool) agegate_setting( $key ), true, false ),
			disabled( $locked, true, false )
		);
	} elseif ( 'password' === $field[1] ) {
		$placeholder = '' !== agegate_setting( $key ) ? __( '(saved; not shown)', 'agegate' ) : '';
		printf(
			'<input type="password" class="regular-text" id="%1$s" name="%2$s" value="" placeholder="%3$s" autocomplete="new-password" %4$s>',
			esc_attr( $id ),
			esc_attr( $name ),
			esc_attr( $placeholder ),
			disabled( $locked, true, false )
		);
	} else {
		printf(
			'<input type="%1$s" class="regular-text" id="%2$s" name="%3$s" value="%4$s" %5$s>',
			esc_attr( $field[1] ),
			esc_attr( $id ),
			esc_attr( $name ),
			esc_attr( (string) agegate_setting( $key ) ),
			disabled( $locked, true, false )
		);
	}
	echo '<p class="description">' . esc_html( $field[2] ) . '</p>';
	if ( $locked ) {
		echo '<p class="description"><strong>' . esc_html__( 'Set in wp-config.php; change it there.', 'agegate' ) . '</strong></p>';
	}
}

add_action(
	'admin_menu',
	static function () {
		add_options_page( __( 'agegate', 'agegate' ), __( 'agegate', 'agegate' ), 'manage_options', 'agegate', 'agegate_render_settings_page' );
	}
);

/** Settings → agegate. */
function agegate_render_settings_page(): void {
	if ( ! current_user_can( 'manage_options' ) ) {
		return;
	}
	echo '<div class="wrap"><h1>' . esc_html( get_admin_page_title() ) . '</h1><form method="post" action="options.php">';
	settings_fields( 'agegate' );
	do_settings_sections( 'agegate' );
	submit_button();
	echo '</form></div>';
}

// The box "Requires age verification" in the editor of every public post type.
add_action(
	'add_meta_boxes',
	static function () {
		add_meta_box( 'agegate', __( 'Age verification', 'agegate' ), 'agegate_render_meta_box', get_post_types( array( 'public' => true ) ), 'side' );
	}
);

/**
 * The box's checkbox.
 *
 * @param WP_Post $post The post being edited.
 */
function agegate_render_meta_box( WP_Post $post ): void {
	wp_nonce_field( 'agegate_meta_box', 'agegate_meta_nonce' );
	printf(
		'<label><input type="checkbox" name="agegate_required" value="1" %1$s> %2$s</label>',
		checked( get_post_meta( $post->ID, AGEGATE_META, true ), '1', false ),
		esc_html__( 'Requires age verification', 'agegate' )
	);
	if ( agegate_setting( 'gate_all' ) ) {
		echo '<p class="description">' . esc_html__( 'Every page is gated (Settings → agegate).', 'agegate' ) . '</p>';
	}
}

add_action(
	'save_post',
	static function ( $post_id ) {
		$nonce = isset( $_POST['agegate_meta_nonce'] ) ? sanitize_text_field( wp_unslash( $_POST['agegate_meta_nonce'] ) ) : '';
		if ( ! wp_verify_nonce( $nonce, 'agegate_meta_box' ) || wp_is_post_revision( $post_id )
			|| ( defined( 'DOING_AUTOSAVE' ) && DOING_AUTOSAVE ) || ! current_user_can( 'edit_post', $post_id ) ) {
			return;
		}
		if ( ! empty( $_POST['agegate_required'] ) ) {
			update_post_meta( $post_id, AGEGATE_META, '1' );
		} else {
			delete_post_meta( $post_id, AGEGATE_META );
		}
	}
);
