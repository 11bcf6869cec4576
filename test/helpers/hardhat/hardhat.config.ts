// The project `hardhat node` runs in for the tests (test/helpers/hardhat.ts): no sources, no
// networks of its own; what Hardhat writes goes to the test's own folder, not into the checkout.
const dir = process.env.TOLLGATE_HARDHAT_DIR ?? '/tmp/tollgate-hardhat'

export default {
  paths: { cache: `${dir}/cache`, artifacts: `${dir}/artifacts` },
}
