/*
 * Imported first by the service's entry points (and set for the test run): the AWS SDK prints, as
 * it loads, that its releases after the first week of January 2027 need Node 22. `npm start` runs
 * on the machine's Node (20 here) with the SDK version package.json pins, so the notice is for
 * whoever upgrades that dependency (docs/decisions.md, "the AWS SDK's Node 22 notice"), not for an
 * operator starting the service, who cannot act on it. Setting the variable yourself keeps your choice.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export {};
