/* The one source of the shared compiler library (libtilec.so); everything else comes
 * whole from the static driver.  Gives users the version they linked against. */
const char *tilec_version(void);

const char *tilec_version(void) {
    return TILEC_VERSION;
}
