import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Starts Solr 9.10.1 embedded (JettySolrRunner, from solr-test-framework) on a free loopback port
 * with the solr home given, prints "SOLR READY <port>" and runs until stdin closes or it is
 * signalled: the ckan suites start it for a real CKAN, as a child process that dies with them.
 */
public class SolrRunner {
  public static void main(String[] args) throws Exception {
    Path home = Path.of(args[0]);
    if (!Files.isRegularFile(home.resolve("solr.xml"))) throw new IllegalArgumentException("no solr.xml in " + home);
    System.setProperty("host", "127.0.0.1");
    System.setProperty("solr.disable.allowUrls", "true");
    JettySolrRunner solr = new JettySolrRunner(home.toString(), JettyConfig.builder().setPort(0).setContext("/solr").build());
    solr.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        solr.stop();
      } catch (Exception e) {
        // exiting anyway
      }
    }));
    System.out.println("SOLR READY " + solr.getLocalPort());
    System.out.flush();
    // The parent holds stdin open: when it goes (even killed), Solr goes too.
    while (System.in.read() != -1) {}
    System.exit(0);
  }
}
